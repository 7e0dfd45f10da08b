"""Fault benchmark: probe a live `python app.py` the way an attacker, a crash and a crowd would.

Probes (each prints held / FAILED and what it saw):

1. **rejected**: every kind of bad `/edit` (α, threshold, box, clicks — including `inf`, `1e999` and 3,000 clicks —,
   brush, empty instruction, unknown session) sent *with an upload*, plus bad undo / branch / score calls: each must
   come back as a short message and leave the session's history exactly as it was, with no traceback in the log.
2. **hostile files**: corrupt, truncated, decompression bomb, animated, CMYK, 16-bit, EXIF-rotated uploads: refused
   with a message (history unchanged) or edited with a note.
3. **concurrent**: `concurrent` edits with uploads on one session at once: each either runs or is refused whole
   (no upload stored without its turn).
4. **clients**: `clients` clients × `edits` edits on their own sessions: errors and cross-session leaks.
5. **lifecycle**: exports expire when a session idles (COSTA_TMP_IDLE_SECONDS), shutdown leaves no temporary files,
   stored files are owner-only, the page config carries no secret.
6. **kills**: `kills` times, kill -9 the app at a random moment of a turn, restart, and audit the store.
7. **auth**: with COSTA_AUTH on, an owner-less session is nobody's and one user cannot fetch another's export.
8. **stop**: `/stop` while a tool call runs on a large sign ends the turn as stopped within `STOP_BOUND_S`, history
   unchanged; the detail compares it with how long the same call takes when it is not stopped.
9. … 18. issue 21's ten defects, one probe each (`bench/faults_defects.py`: emptied database, growth, surrogates,
   storage faults, integrity, undo vs edit, huge ids, exports, image modes, owner-only files).

`--only NAME,NAME` runs some probes (by the names printed, e.g. `--only stop`).

The closing audit counts versions lost (row without its file or with another SHA-256), stored files deleted (in the
store's session folders before a probe, gone after it), orphan files, files quarantined, turns left `running`,
cross-session leaks and temporary bytes left. `--app-dir` runs the probes against another checkout (e.g.
main, for a before/after comparison).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from bench.app import REPO_ROOT, free_port, run_load, sign_image

HELP = (
    "fault probes on a live app: rejected requests, hostile files, concurrent edits, clients, kill -9, auth, stop, "
    "and issue 21's ten defects (bench/faults_defects.py)"
)
REPLACE = "replace the text 'SALE' with 'OPEN'"
#: Most seconds from `/stop` to a stopped turn's result for the stop probe to hold.
STOP_BOUND_S = 0.5


@dataclass
class Probe:
    name: str
    held: bool
    detail: str
    seconds: float = 0.0


@dataclass
class LiveApp:
    """`python app.py` in `app_dir` on a free port, its output in `home/app.log`."""

    home: Path
    app_dir: Path
    env: dict[str, str] = field(default_factory=dict)
    proc: subprocess.Popen[bytes] | None = None
    port: int = 0
    log_file: Path | None = None  # default home/app.log (elsewhere when the home's disk must go read-only)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def start(self, timeout_s: float = 120) -> LiveApp:
        self.port = free_port()
        env = {**os.environ, "COSTA_HOME": str(self.home), "COSTA_PORT": str(self.port), **self.env}
        env["GRADIO_ANALYTICS_ENABLED"] = "False"
        env["TMPDIR"] = str(private_tmp(self.home))  # temporary files of any kind land where `tmp_bytes` counts them
        env.pop("OPENAI_BASE_URL", None)
        self.home.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen([sys.executable, "app.py"], cwd=self.app_dir, env=env, stdout=log, stderr=log)
        t0 = time.time()
        while time.time() - t0 < timeout_s:
            if self.proc.poll() is not None:
                raise RuntimeError("app exited early:\n" + self.log()[-2000:])
            try:
                with urllib.request.urlopen(self.url, timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("app did not start")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def kill9(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    @property
    def log_path(self) -> Path:
        return self.log_file or self.home / "app.log"

    def log(self) -> str:
        p = self.log_path
        return p.read_text(errors="replace") if p.exists() else ""

    def client(self, auth: tuple[str, str] | None = None) -> Any:
        from gradio_client import Client

        return Client(self.url, verbose=False, auth=auth)


def _hist(c: Any, sid: str) -> tuple[int | None, list[int]]:
    h = c.predict(sid, api_name="/history")
    return h["head"], [v["id"] for v in h["versions"]]


def _short(e: Exception) -> str:
    return str(e).strip().splitlines()[0][:120] if str(e).strip() else type(e).__name__


def probe_rejected(app: LiveApp, folder: Path) -> Probe:
    from gradio_client import handle_file

    c = app.client()
    sid = c.predict(api_name="/new_session")
    sign = sign_image(folder / "rej.png", (230, 230, 230))
    c.predict(sid, handle_file(str(sign)), REPLACE, 1.0, 0.8, "", "", api_name="/edit")
    small = folder / "small-mask.png"
    Image.fromarray(np.full((10, 10), 255, np.uint8)).save(small)
    empty = folder / "empty-mask.png"
    Image.fromarray(np.zeros((200, 480), np.uint8)).save(empty)
    up = handle_file(str(sign))

    def edit(alpha: Any = 1.0, threshold: Any = 0.8, box: str = "", clicks: str = "", *brush: Any) -> Any:
        return c.predict(sid, up, REPLACE, alpha, threshold, box, clicks, *brush, api_name="/edit")

    cases: list[tuple[str, Callable[[], Any]]] = [
        ("alpha 5", lambda: edit(5)),
        ("alpha 1e999", lambda: edit("1e999")),
        ("threshold 2", lambda: edit(1.0, 2)),
        ("box outside", lambda: edit(1.0, 0.8, "400,150,100,100")),
        ("box inf", lambda: edit(1.0, 0.8, "inf,0,5,5")),
        ("box 1e999", lambda: edit(1.0, 0.8, "1e999,0,5,5")),
        ("clicks 1e999", lambda: edit(1.0, 0.8, "", "1e999,4")),
        ("clicks outside", lambda: edit(1.0, 0.8, "", "900,10")),
        ("3000 clicks", lambda: edit(1.0, 0.8, "", ";".join(["20,20"] * 3000))),
        ("brush size", lambda: edit(1.0, 0.8, "", "", handle_file(str(small)))),
        ("brush empty", lambda: edit(1.0, 0.8, "", "", handle_file(str(empty)))),
        ("no instruction", lambda: c.predict(sid, up, "  ", 1.0, 0.8, "", "", api_name="/edit")),
        ("unknown session", lambda: c.predict("nope", up, REPLACE, 1.0, 0.8, "", "", api_name="/edit")),
        ("branch foreign", lambda: c.predict(sid, 10**9, api_name="/branch")),
        ("score bad", lambda: c.predict(sid, 1, "s1", 0.55, "", "x", api_name="/score")),
        ("redo nothing", lambda: c.predict(sid, api_name="/redo")),
    ]  # fmt: skip
    before = _hist(c, sid)
    log_before = len(app.log())
    bad: list[str] = []
    for name, call in cases:
        try:
            call()
            bad.append(f"{name}: accepted")
        except Exception as e:
            msg = _short(e)
            if "internal error" in msg or not msg:
                bad.append(f"{name}: {msg}")
        if _hist(c, sid) != before:
            bad.append(f"{name}: history changed")
            before = _hist(c, sid)
    tracebacks = app.log()[log_before:].count("Traceback")
    if tracebacks:
        bad.append(f"{tracebacks} traceback(s) in the log")
    return Probe("rejected", not bad, "; ".join(bad) or f"{len(cases)} bad requests refused, nothing changed")


def probe_hostile(app: LiveApp, folder: Path) -> Probe:
    from gradio_client import handle_file

    from costa.testing.hostile_files import HOSTILE

    c = app.client()
    sid = c.predict(api_name="/new_session")
    bad: list[str] = []
    for name, write, accepted in HOSTILE:
        path = write(folder / name)
        before = _hist(c, sid)
        try:
            c.predict(sid, handle_file(str(path)), "make it brighter", 1.0, 0.8, "", "", api_name="/edit")
            if not accepted:
                bad.append(f"{name}: accepted")
        except Exception as e:
            msg = _short(e)
            if accepted or "internal error" in msg:
                bad.append(f"{name}: {msg}")
            if _hist(c, sid) != before:
                bad.append(f"{name}: refused but history changed")
    return Probe("hostile files", not bad, "; ".join(bad) or f"{len(HOSTILE)} files refused or converted")


def probe_concurrent(app: LiveApp, folder: Path, n: int) -> Probe:
    from gradio_client import handle_file

    c = app.client()
    sid = c.predict(api_name="/new_session")
    images = [sign_image(folder / f"conc{i}.png", (200, 200 - 10 * i, 180)) for i in range(n)]
    results: list[str] = []
    lock = threading.Lock()

    def one(i: int) -> None:
        try:
            app.client().predict(sid, handle_file(str(images[i])), REPLACE, 1.0, 0.8, "", "", api_name="/edit")
            out = "ran"
        except Exception as e:
            out = "refused" if "already running" in str(e) else f"error: {_short(e)}"
        with lock:
            results.append(out)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    h = c.predict(sid, api_name="/history")
    bases = {t["base_version"] for t in h["turns"]}
    orphan_uploads = [v["id"] for v in h["versions"] if v["kind"] == "upload" and v["id"] not in bases]
    errors = [r for r in results if r.startswith("error")]
    held = not errors and not orphan_uploads and results.count("ran") >= 1
    detail = f"{results.count('ran')} ran, {results.count('refused')} refused whole"
    if orphan_uploads:
        detail += f"; uploads stored without their turn: {orphan_uploads}"
    return Probe("concurrent edits", held, detail + (f"; {errors}" if errors else ""))


def probe_clients(app: LiveApp, folder: Path, clients: int, edits: int) -> tuple[Probe, int]:
    res = run_load(app.url, clients, edits, folder)
    held = not res.errors and not res.leaks
    detail = f"{clients}×{edits} edits in {res.wall:.1f} s; errors {len(res.errors)}; leaks {len(res.leaks)}"
    if res.errors:
        detail += f" ({res.errors[0][:100]})"
    return Probe("many clients", held, detail), len(res.leaks)


def _modes(home: Path) -> list[str]:
    """Stored paths readable by others than their owner."""
    loose = []
    for p in [home / "costa.db", home / "sessions", *(home / "sessions").glob("*"), *(home / "sessions").glob("*/*")]:
        if p.exists() and p.stat().st_mode & 0o077:
            loose.append(f"{p.relative_to(home)} {oct(p.stat().st_mode & 0o777)}")
    return loose


def private_tmp(home: Path) -> Path:
    """The system temporary folder the probed app is given (TMPDIR), inside its home."""
    p = home / "systmp"
    p.mkdir(parents=True, exist_ok=True)
    return p


def tmp_files(home: Path, gradio: bool = True) -> list[Path]:
    """Files under the app's temporary folders: COSTA_HOME/tmp and the TMPDIR it was given (without Gradio's cache,
    which expires by age, when `gradio` is False). Gradio's one 51-byte `.ses` marker in TMPDIR is not counted."""
    out = []
    for root in (home / "tmp", home / "systmp"):
        for f in root.rglob("*") if root.exists() else ():
            cache = any(part.endswith("-gradio") or part == "gradio" for part in f.parts)
            if f.is_file() and f.name != ".ses" and (gradio or not cache):
                out.append(f)
    return out


def tmp_bytes(home: Path, gradio: bool = True) -> int:
    """Bytes in `tmp_files`."""
    return sum(f.stat().st_size for f in tmp_files(home, gradio))


def probe_lifecycle(app: LiveApp, folder: Path, idle_s: float) -> tuple[Probe, int]:
    """Exports in one session, then idle: its temporary files must expire; config and file modes checked."""
    from gradio_client import handle_file

    home = app.home
    bad: list[str] = []
    c = app.client()
    sid = c.predict(api_name="/new_session")
    c.predict(sid, handle_file(str(sign_image(folder / "life.png", (90, 160, 200)))), REPLACE, 1.0, 0.8, "", "",
              api_name="/edit")  # fmt: skip
    for _ in range(3):
        c.predict(sid, api_name="/export")
    peak = tmp_bytes(home, gradio=False)
    time.sleep(idle_s * 2 + 2)
    idle = tmp_bytes(home, gradio=False)
    cache = tmp_bytes(home) - idle
    if idle:
        bad.append(f"{idle:,} temp bytes {idle_s * 2 + 2:.0f} s after every session went idle (peak {peak:,})")
    with urllib.request.urlopen(app.url + "config", timeout=10) as r:
        config = r.read().decode()
    secret = home / "browser_secret"
    if secret.exists() and secret.read_text().strip() in config:
        bad.append("the browser-state secret is served in /config")
    bad += [f"loose mode: {m}" for m in _modes(home)]
    detail = "; ".join(bad) or (
        f"session temp bytes: peak {peak:,}, {idle:,} once idle (Gradio's cache {cache:,}, deleted by age); "
        "files owner-only; no secret served"
    )
    return Probe("lifecycle", not bad, detail), peak


def stored_files(home: Path) -> set[Path]:
    """Every file in the store's session folders (images, brush masks; not the journals)."""
    return {p for p in (home / "sessions").glob("*/*") if p.is_file() and p.name != "journal.jsonl"}


def audit(home: Path) -> dict[str, int]:
    """Versions lost (row without its file, or with other pixels), orphan files (in a session folder, neither a
    version, a brush mask nor the journal), files in the quarantine, turns left running, database integrity."""
    from costa.store import image_sha256

    db = sqlite3.connect(f"file:{home / 'costa.db'}?mode=ro", uri=True)
    rows = db.execute("SELECT file, sha256 FROM versions").fetchall()
    running = db.execute("SELECT COUNT(*) FROM turns WHERE status = 'running'").fetchone()[0]
    integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
    db.close()
    lost = 0
    known = set()
    for file, sha in rows:
        path = Path(file) if Path(file).is_absolute() else home / file
        known.add(path)
        try:
            with Image.open(path) as img:
                lost += image_sha256(np.asarray(img.convert("RGB"))) != sha
        except OSError:
            lost += 1
    files = [
        p
        for p in (home / "sessions").glob("*/*")
        if p.is_file() and not p.name.startswith("mask-") and p.name != "journal.jsonl"
    ]
    orphans = sum(1 for p in files if p not in known)
    quarantine = home / "quarantine"
    quarantined = sum(1 for p in quarantine.rglob("*") if p.is_file()) if quarantine.is_dir() else 0
    return {
        "versions": len(rows),
        "lost": lost,
        "orphans": orphans,
        "quarantined": quarantined,
        "running": running,
        "corrupt": integrity != "ok",
    }


def probe_kills(app: LiveApp, folder: Path, kills: int, seed: int) -> Probe:
    """Kill -9 the app `kills` times at a random moment of a turn, restarting it each time."""
    from gradio_client import handle_file

    rng = random.Random(seed)
    sign = sign_image(folder / "kill.png", (250, 240, 200))
    for _ in range(kills):
        c = app.client()
        sid = c.predict(api_name="/new_session")
        c.submit(sid, handle_file(str(sign)), REPLACE, 1.0, 0.8, "", "", api_name="/edit")
        time.sleep(rng.uniform(0.2, 2.0))
        app.kill9()
        app.start()
    found = audit(app.home)
    held = not (found["lost"] or found["orphans"] or found["running"] or found["corrupt"])
    detail = (
        f"{kills} kills: {found['versions']} versions, lost {found['lost']}, orphans {found['orphans']}, "
        f"turns left running {found['running']}, database {'CORRUPT' if found['corrupt'] else 'ok'}"
    )
    return Probe("kill -9 and restart", held, detail)


def probe_auth(app: LiveApp, folder: Path, ownerless: str) -> Probe:
    """Restart with login on: the owner-less session is nobody's, and bob cannot fetch alice's export by URL."""
    import requests
    from gradio_client import handle_file

    app.stop()
    app.env["COSTA_AUTH"] = "alice:pw-a,bob:pw-b"
    app.start()
    bad: list[str] = []
    alice = app.client(("alice", "pw-a"))
    try:
        alice.predict(ownerless, api_name="/history")
        bad.append("a signed-in user opened a session made before login was on")
    except Exception:
        pass
    sid = alice.predict(api_name="/new_session")
    alice.predict(sid, handle_file(str(sign_image(folder / "auth.png", (10, 120, 90)))), REPLACE, 1.0, 0.8, "", "",
                  api_name="/edit")  # fmt: skip
    s_alice, s_bob = requests.Session(), requests.Session()
    for s, (u, p) in ((s_alice, ("alice", "pw-a")), (s_bob, ("bob", "pw-b"))):
        s.post(app.url + "login", data={"username": u, "password": p}, timeout=10)
    event = s_alice.post(app.url + "gradio_api/call/export", json={"data": [sid]}, timeout=10).json()["event_id"]
    stream = s_alice.get(app.url + f"gradio_api/call/export/{event}", timeout=60).text
    payload = stream.split("data:")[-1].strip().splitlines()[0]
    data = json.loads(payload) if payload.startswith("[") else []
    urls = [d["url"] for d in data if isinstance(d, dict) and d.get("url")]
    if not urls:
        bad.append(f"the export returned no file ({payload[:80]})")
    if any(s_bob.get(u, timeout=10).status_code == 200 for u in urls):
        bad.append("another signed-in user downloaded an export by its URL")
    if urls and s_alice.get(urls[0], timeout=10).status_code != 200:
        bad.append("the owner could not download their own export")
    return Probe("auth isolation", not bad, "; ".join(bad) or "owner-less session refused; exports owner-only")


def probe_stop(app: LiveApp, folder: Path) -> Probe:
    """Stop while a tool call runs (see the module docstring); first a full turn measures the calls' seconds."""
    from gradio_client import handle_file

    big = folder / "stop_big.png"
    Image.open(sign_image(folder / "stop_small.png", (238, 236, 228))).resize((2400, 1000)).save(big)
    c = app.client()
    _, full = c.predict(c.predict(api_name="/new_session"), handle_file(str(big)), REPLACE, 1.0, 0.8, "", "",
                        api_name="/edit")  # fmt: skip
    took = {k["tool"]: k["seconds"] for k in full["calls"] if k["seconds"] is not None}
    sid = c.predict(api_name="/new_session")
    job = c.submit(sid, handle_file(str(big)), REPLACE, 1.0, 0.8, "", "", api_name="/edit")
    running, deadline = None, time.time() + 120
    while running is None and time.time() < deadline and not job.done():
        outs = job.outputs()
        running = next((k["tool"] for k in (outs[-1][1]["calls"] if outs else []) if k["passed"] is None), None)
        time.sleep(0.01)
    if running is None:
        return Probe("stop", False, "no tool call was seen running")
    before = _hist(c, sid)
    t0 = time.perf_counter()
    c.predict(sid, api_name="/stop")
    _, report = job.result(timeout=300)
    seconds = time.perf_counter() - t0
    same = _hist(c, sid) == before
    held = report["status"] == "stopped" and seconds < STOP_BOUND_S and same
    detail = (
        f"/stop during {running} (a {took.get(running, float('nan')):.2f} s call unstopped): turn "
        f"{report['status']} in {seconds:.2f} s (bound {STOP_BOUND_S:g} s); "
        f"history {'unchanged' if same else 'CHANGED'}"
    )
    return Probe("stop", held, detail)


def run_faults(
    app_dir: Path = REPO_ROOT,
    kills: int = 2,
    clients: int = 4,
    edits: int = 2,
    concurrent: int = 4,
    seed: int = 0,
    only: frozenset[str] | None = None,
) -> tuple[str, bool]:
    """Run every probe (or those named in `only`) against one app home (restarted by the kill and auth probes);
    return the report and whether everything held."""
    probes: list[Probe] = []
    leaks, peak, idle_s, deleted = 0, 0, 3.0, 0
    defect_probes, probe_owner_files = _defects()  # bench/faults_defects.py imports this module
    with tempfile.TemporaryDirectory(prefix="costa-faults-") as tmp:
        folder = Path(tmp)
        # no rate limit on the probed app (every probe calls from one address); the growth probe has its own app
        app = LiveApp(folder / "home", app_dir, {"COSTA_TMP_IDLE_SECONDS": f"{idle_s:g}", "COSTA_RATE_LIMIT": "0"})
        limited = LiveApp(folder / "limited", app_dir, {"COSTA_RATE_LIMIT": "20"})

        def timed(name: str, fn: Callable[[], Any]) -> Any:
            nonlocal deleted
            if only is not None and name not in only:
                return None
            t0 = time.perf_counter()
            kept = stored_files(app.home)
            try:
                out = fn()
            except Exception as e:  # a probe that crashes failed
                out = Probe(name, False, f"crashed: {_short(e)}")
            gone = kept - stored_files(app.home)  # the store's files that were there before the probe
            deleted += len(gone)
            if gone:
                out = Probe(
                    name,
                    False,
                    f"{len(gone)} stored file(s) deleted; " + (out[0] if isinstance(out, tuple) else out).detail,
                )
            probe = out[0] if isinstance(out, tuple) else out
            probe.seconds = time.perf_counter() - t0
            probes.append(probe)
            return out

        try:
            app.start()
            ownerless = app.client().predict(api_name="/new_session")
            timed("rejected", lambda: probe_rejected(app, folder))
            timed("hostile files", lambda: probe_hostile(app, folder))
            timed("concurrent edits", lambda: probe_concurrent(app, folder, concurrent))
            timed("stop", lambda: probe_stop(app, folder))
            out = timed("many clients", lambda: probe_clients(app, folder, clients, edits))
            leaks = out[1] if isinstance(out, tuple) else 0
            out = timed("lifecycle", lambda: probe_lifecycle(app, folder, idle_s))
            peak = out[1] if isinstance(out, tuple) else 0
            timed("kill -9 and restart", lambda: probe_kills(app, folder, kills, seed))
            if only is None or "growth" in only:
                limited.start()
            defect_probes(app, folder, timed, limited if limited.proc is not None else None)
            limited.stop()
            timed("auth isolation", lambda: probe_auth(app, folder, ownerless))
            timed("owner-only files", lambda: probe_owner_files(app, folder))
        finally:
            app.stop()
            limited.stop()
        found = audit(app.home)
        leftovers = tmp_files(app.home)
        left = sum(f.stat().st_size for f in leftovers)
        left_names = ", ".join(str(f.relative_to(app.home)) for f in leftovers[:3])
    lines = [f"fault benchmark (python app.py in {app_dir})"]
    for p in probes:
        lines.append(f"  {'held  ' if p.held else 'FAILED'} {p.name:20} {p.seconds:6.1f} s  {p.detail}")
    lines.append(
        f"  totals: probes held {sum(p.held for p in probes)}/{len(probes)}; versions lost {found['lost']} of "
        f"{found['versions']}; files deleted {deleted}; orphans {found['orphans']}; quarantined "
        f"{found['quarantined']}; turns left running "
        f"{found['running']}; cross-session leaks {leaks}; temp bytes: peak {peak:,} in one exporting session, left "
        f"after shutdown {left:,}" + (f" ({left_names})" if left else "")
    )
    bad = found["lost"] or found["orphans"] or found["running"] or leaks or left or deleted
    ok = all(p.held for p in probes) and not bad
    return "\n".join(lines), ok


def _defects() -> tuple[Any, Any]:
    from bench.faults_defects import defect_probes, probe_owner_files

    return defect_probes, probe_owner_files


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kills", type=int, default=2, help="kill -9 / restart rounds")
    p.add_argument("--clients", type=int, default=4, help="clients editing at once")
    p.add_argument("--edits", type=int, default=2, help="edits per client")
    p.add_argument("--concurrent", type=int, default=4, help="simultaneous edits on one session")
    p.add_argument("--seed", type=int, default=0, help="seed for the kill moments")
    p.add_argument("--app-dir", type=Path, default=REPO_ROOT, help="checkout whose app.py to probe (default: this)")
    p.add_argument("--only", default="", help="comma-separated probe names to run (default: all)")


def run(args: argparse.Namespace) -> int:
    only = frozenset(n.strip() for n in args.only.split(",") if n.strip()) or None
    report, ok = run_faults(args.app_dir, args.kills, args.clients, args.edits, args.concurrent, args.seed, only)
    print(report)
    return 0 if ok else 1
