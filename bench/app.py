"""App benchmark: start-up time, first streamed event, and many clients at once — each against a baseline in the run.

1. **Ready**: seconds from starting `python app.py` to the first HTTP 200, median of `starts` runs (fresh COSTA_HOME
   and port each time). Baseline: a bare Gradio app (one textbox) started the same way, so the ratio shows what costa
   adds on top of Gradio itself. Target ≤ 8 s.
2. **First event**: seconds from submitting `/edit` to the first streamed update, median over `first_runs` edits.
   Baseline: the round trip of the trivial `/history` call. Target ≤ 0.3 s.
3. **Load**: `clients` gradio_client clients in parallel, each with its own session and its own image (a sign on a
   background colour unique to the client), each running `edits` text replacements in a row. Reports errors (target
   0), p50/p95 turn latency against one client alone (the baseline), and cross-session leaks (target 0): a leak is a
   history entry the client did not make, or a result whose background colour is another client's.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

REPO_ROOT = Path(__file__).resolve().parents[1]
READY_TARGET_S = 8.0
FIRST_EVENT_TARGET_S = 0.3
#: A start that takes longer than this is a failure, not a measurement.
START_TIMEOUT_S = 120.0
BARE_APP = """
import os, gradio as gr
with gr.Blocks(analytics_enabled=False) as demo:
    gr.Textbox()
demo.queue().launch(server_name="127.0.0.1", server_port=int(os.environ["COSTA_PORT"]), ssr_mode=False)
"""
#: Instructions each load client alternates between (each undoes the previous one's text).
EDITS = ("replace the text 'SALE' with 'OPEN'", "replace the text 'OPEN' with 'SALE'")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_app(args: list[str], home: Path, port: int) -> tuple[subprocess.Popen[str], float]:
    """Start a server process; return it and the seconds until `/` answered 200."""
    env = {**os.environ, "COSTA_HOME": str(home), "COSTA_PORT": str(port), "GRADIO_ANALYTICS_ENABLED": "False"}
    env.pop("OPENAI_BASE_URL", None)
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, *args], cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    url = f"http://127.0.0.1:{port}/"
    while time.perf_counter() - t0 < START_TIMEOUT_S:
        if proc.poll() is not None:
            raise RuntimeError(f"{args} exited early: {proc.stderr.read() if proc.stderr else ''}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return proc, time.perf_counter() - t0
        except OSError:
            time.sleep(0.05)
    stop_app(proc)
    raise RuntimeError(f"{args} did not answer within {START_TIMEOUT_S:.0f} s")


def stop_app(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def sign_image(path: Path, background: tuple[int, int, int], word: str = "SALE") -> Path:
    """A 480 × 200 sign: `word` in red on a flat background of the given colour."""
    img = Image.new("RGB", (480, 200), background)
    d = ImageDraw.Draw(img)
    font_path = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")
    font = ImageFont.truetype(str(font_path), 64) if font_path.exists() else ImageFont.load_default(size=64)
    d.text((60, 50), word, font=font, fill=(190, 20, 20))
    img.save(path)
    return path


@dataclass
class LoadResult:
    clients: int
    edits: int
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)
    wall: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)


def _client_run(url: str, idx: int, edits: int, folder: Path, colour: tuple[int, int, int], out: LoadResult) -> None:
    from gradio_client import Client, handle_file

    lock = out.lock
    try:
        client = Client(url, verbose=False)
        sid = client.predict(api_name="/new_session")
        image = sign_image(folder / f"client{idx}.png", colour)
        mine: set[int] = set()
        for k in range(edits):
            t0 = time.perf_counter()
            try:
                result, report = client.predict(
                    sid, handle_file(str(image)) if k == 0 else None, EDITS[k % 2], 1.0, 0.8, "", "", api_name="/edit"
                )
            except Exception as e:  # every failed call is counted, whatever it is
                with lock:
                    out.errors.append(f"client {idx} edit {k}: {e}")
                continue
            if report.get("status") == "proposed":  # passed but not verified on real photos: the user accepts it
                result, decided = client.predict(sid, api_name="/accept")
                report = {**report, "status": "done", "version_id": decided["decided"]["version_id"]}
            with lock:
                out.latencies.append(time.perf_counter() - t0)
            if report.get("status") != "done" or result is None:
                with lock:
                    out.errors.append(f"client {idx} edit {k}: status {report.get('status')}: {report.get('message')}")
                continue
            mine.add(int(report["version_id"]))
            corner = np.asarray(Image.open(result).convert("RGB"))[:8, :8].reshape(-1, 3).mean(axis=0)
            if np.abs(corner - np.asarray(colour)).max() > 3:
                with lock:
                    out.leaks.append(f"client {idx} edit {k}: result background {corner.round()} is not {colour}")
        history = client.predict(sid, api_name="/history")
        made = {v["id"] for v in history["versions"] if v["kind"] == "turn"}
        foreign = made - mine
        if foreign:
            with lock:
                out.leaks.append(f"client {idx}: history has versions it did not make: {sorted(foreign)}")
    except Exception as e:
        with lock:
            out.errors.append(f"client {idx}: {e}")


def run_load(url: str, clients: int, edits: int, folder: Path) -> LoadResult:
    out = LoadResult(clients, edits)
    colours = [(40 + 25 * i % 200, 200 - 20 * i % 180, 120 + 15 * i % 120) for i in range(clients)]
    threads = [
        threading.Thread(target=_client_run, args=(url, i, edits, folder, colours[i], out)) for i in range(clients)
    ]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out.wall = time.perf_counter() - t0
    return out


def first_event_latency(url: str, runs: int, folder: Path) -> tuple[list[float], list[float]]:
    """Seconds from submitting /edit to its first streamed update; and /history round trips as the baseline."""
    from gradio_client import Client, handle_file

    client = Client(url, verbose=False)
    sid = client.predict(api_name="/new_session")
    image = sign_image(folder / "first.png", (236, 234, 226))
    firsts: list[float] = []
    base: list[float] = []
    for k in range(runs + 1):  # the first edit loads the OCR models: not counted
        t0 = time.perf_counter()
        job = client.submit(
            sid, handle_file(str(image)) if k == 0 else None, EDITS[k % 2], 1.0, 0.8, "", "", api_name="/edit"
        )
        first = None
        for _ in job:
            if first is None:
                first = time.perf_counter() - t0
        job.result()
        if k > 0 and first is not None:
            firsts.append(first)
        t1 = time.perf_counter()
        client.predict(sid, api_name="/history")
        if k > 0:
            base.append(time.perf_counter() - t1)
    return firsts, base


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    return float(np.percentile(np.asarray(values), q))


def run_app_bench(starts: int = 5, first_runs: int = 10, clients: int = 8, edits: int = 5) -> str:
    """Run all three measurements and return the report (targets marked met / MISSED)."""
    lines = ["app benchmark (python app.py on this machine)"]
    with tempfile.TemporaryDirectory(prefix="costa-appbench-") as tmp:
        folder = Path(tmp)
        ready: list[float] = []
        bare: list[float] = []
        for i in range(starts):
            for args, bucket in (([str(REPO_ROOT / "app.py")], ready), (["-c", BARE_APP], bare)):
                proc, seconds = start_app(args, folder / f"home-{i}-{len(bucket)}-{args[0][-6:]}", free_port())
                bucket.append(seconds)
                stop_app(proc)
        med, bare_med = statistics.median(ready), statistics.median(bare)
        verdict = "met" if med <= READY_TARGET_S else "MISSED"
        lines.append(
            f"  ready (HTTP 200) after start: median {med:.2f} s of {starts} "
            f"[{', '.join(f'{s:.2f}' for s in ready)}]; bare Gradio app {bare_med:.2f} s; "
            f"ratio {med / bare_med:.2f}× — target ≤ {READY_TARGET_S:.0f} s: {verdict}"
        )
        port = free_port()
        proc, _ = start_app([str(REPO_ROOT / "app.py")], folder / "home-load", port)
        url = f"http://127.0.0.1:{port}/"
        try:
            firsts, base = first_event_latency(url, first_runs, folder)
            f_med, b_med = statistics.median(firsts), statistics.median(base)
            verdict = "met" if f_med <= FIRST_EVENT_TARGET_S else "MISSED"
            lines.append(
                f"  first streamed event after submit: median {f_med * 1000:.0f} ms, p95 {_pct(firsts, 95) * 1000:.0f}"
                f" ms over {len(firsts)} edits; /history round trip {b_med * 1000:.0f} ms; ratio {f_med / b_med:.2f}×"
                f" — target ≤ {FIRST_EVENT_TARGET_S * 1000:.0f} ms: {verdict}"
            )
            solo = run_load(url, 1, edits, folder)
            load = run_load(url, clients, edits, folder)
        finally:
            stop_app(proc)
    p50, p95 = _pct(load.latencies, 50), _pct(load.latencies, 95)
    s50 = _pct(solo.latencies, 50)
    lines.append(
        f"  {clients} clients × {edits} edits: {len(load.latencies)} turns in {load.wall:.1f} s; errors "
        f"{len(load.errors)} (target 0: {'met' if not load.errors else 'MISSED'}); turn latency p50 {p50:.2f} s, "
        f"p95 {p95:.2f} s; one client alone p50 {s50:.2f} s (ratio {p50 / s50:.2f}×); cross-session leaks "
        f"{len(load.leaks)} (target 0: {'met' if not load.leaks else 'MISSED'})"
    )
    lines += [f"    error: {e}" for e in (solo.errors + load.errors)[:10]]
    lines += [f"    leak: {e}" for e in load.leaks[:10]]
    return "\n".join(lines)


HELP = "app start-up time, first streamed event, concurrent clients × edits"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare this benchmark's options."""
    p.add_argument("--starts", type=int, default=5, help="app starts timed (median reported)")
    p.add_argument("--first-runs", type=int, default=10, help="edits timed to their first streamed event")
    p.add_argument("--clients", type=int, default=8, help="clients editing at once")
    p.add_argument("--edits", type=int, default=5, help="edits per client")


def run(args: argparse.Namespace) -> int:
    """Run and print the report."""
    print(run_app_bench(args.starts, args.first_runs, args.clients, args.edits))
    return 0
