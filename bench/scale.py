"""Scale benchmark: app replicas sharing one PostgreSQL database and one COSTA_HOME, against one replica in the run.

A throwaway PostgreSQL (bench/pg_server.py) starts on 127.0.0.1; `python app.py` replicas start on distinct
ports with the same COSTA_DATABASE_URL and COSTA_HOME, as in the README's "Several replicas behind a load balancer".

1. **Throughput**: `clients` gradio_client clients, each on its own session and sticky to one replica (client i on
   replica i mod R, as a load balancer's `ip_hash` would place them), each running `edits` whole-image brighter /
   darker edits on a 480 × 200 sign (embedded, one to three seconds a turn here; `--text`: bench/app.py's text
   replacements). Reported for 1 … R replicas (the same database; all started together, the ones not measured yet
   idle): turns per minute, p50 / p95 turn latency, errors; the ratio R / 1.
2. **kill -9 mid-turn** (`kills` kills, at most 3 rounds each and `probe_seconds` in all): a text replacement on a
   1920 × 800 sign runs on replica A, A is killed while the database says it runs; replica B serves the session at
   once: its history intact (every version, same SHA-256), a new turn there runs, and the killed turn reads
   `interrupted`. A is restarted for the next round (a turn that ended before the signal is a round, not a kill).
3. **PostgreSQL restart**: clients edit on both replicas while the server stops for `outage_seconds` and starts again:
   every error is one sentence (no traceback, no password, not an internal error), every client completes a turn
   after the restart, and no version stored before the stop is lost (rows and files, counted before and after).
4. **The same load with COSTA_RUNNER=ray** (`--runners`, default both when ray is installed): a new local Ray in the
   bench's process on 127.0.0.1 (bench/scale_ray.py), the families the turns call (adjustments, text drawing)
   served on it, and replicas started as its drivers; the table gets a row per runner. On a machine
   with a few CPU cores Ray is slower than in process: every served call is serialised to a replica process that
   competes for the same cores; it pays off when the served tools hold GPUs and models.
5. **Ray worker killed mid-call** (with the Ray runner): SIGKILL to the worker process of the Serve replica running
   one of a text turn's calls; the turn ends (done, or one sentence), Serve starts a new replica, the next turn on
   the session succeeds, its history intact.

Exit code 1, with a one-line reason last, when a probe's expectation fails or a configuration completed no turns.
Traffic only to 127.0.0.1.
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from bench.app import EDITS as TEXT_EDITS
from bench.app import sign_image
from bench.faults import LiveApp, Probe

HELP = "replicas on one PostgreSQL: 1 vs 2 app processes under N clients; kill -9 and database-restart probes"
#: Seconds to wait for a turn to show `running` in the database before giving a kill round up.
RUNNING_WAIT_S = 60.0
#: Rounds the kill probe may spend per kill asked for (a turn that ended before the signal landed is no kill).
MAX_ROUNDS_PER_KILL = 3
#: Hosts this bench talks to.
HOST = "127.0.0.1"
#: The timed edits each client alternates between: a global adjustment (embedded, about a second a turn here);
#: `--text` uses bench/app.py's text replacements instead (OCR and inpainting: slower).
ADJUST_EDITS = ("make the whole image brighter", "make the whole image darker")


@dataclass
class Load:
    """What one configuration's clients did."""

    runner: str
    replicas: int
    clients: int
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    wall: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def per_minute(self) -> float:
        return 60.0 * len(self.latencies) / self.wall if self.wall > 0 else 0.0


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


def _short(e: BaseException) -> str:
    return _line(str(e)) or type(e).__name__


def _line(text: str, most: int = 200) -> str:
    """The first non-blank line of `text`, at most `most` characters."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")[:most]


def edit_once(client: Any, sid: str, image: Path | None, instruction: str) -> tuple[bool, str]:
    """One `/edit` (accepting a proposal, as a user would); (done, the message when not)."""
    from gradio_client import handle_file

    try:
        result, report = client.predict(
            sid, handle_file(str(image)) if image else None, instruction, 1.0, 0.8, "", "", api_name="/edit"
        )
        if report.get("status") == "proposed":
            result, _ = client.predict(sid, api_name="/accept")
            report = {**report, "status": "done"}
    except Exception as e:  # every refused or failed call is counted with its message
        return False, str(e).strip() or type(e).__name__
    if report.get("status") != "done" or result is None:
        return False, f"status {report.get('status')}: {report.get('message')}"
    return True, ""


def replica_env(db_url: str) -> dict[str, str]:
    """What every replica is given on top of its own port: the shared database, 127.0.0.1, no rate limit (the
    clients all call from one address)."""
    return {"COSTA_DATABASE_URL": db_url, "COSTA_HOST": HOST, "COSTA_RATE_LIMIT": "0"}


def make_replica(home: Path, logs: Path, name: str, db_url: str, extra: dict[str, str] | None = None) -> LiveApp:
    """Replica `name` (not started): the shared `home`, its own log file, `extra` on top of `replica_env`."""
    from bench.app import REPO_ROOT

    return LiveApp(home, REPO_ROOT, replica_env(db_url) | (extra or {}), log_file=logs / f"replica-{name}.log")


def run_load(
    runner: str, urls: list[str], clients: int, edits: int, folder: Path, instructions: tuple[str, str]
) -> Load:
    """`clients` threads, client i on `urls[i % len(urls)]`, each `edits` timed edits on a session of its own
    (alternating between the two `instructions`; the first one uploads the client's sign)."""
    from gradio_client import Client

    out = Load(runner, len(urls), clients)

    def one(i: int) -> None:
        try:
            client = Client(urls[i % len(urls)], verbose=False)
            sid = client.predict(api_name="/new_session")
            image = sign_image(folder / f"load{i}.png", (40 + 25 * i % 200, 200 - 20 * i % 180, 120))
        except Exception as e:
            with out.lock:
                out.errors.append(f"client {i}: {_short(e)}")
            return
        for k in range(edits):
            t0 = time.perf_counter()
            ok, msg = edit_once(client, sid, image if k == 0 else None, instructions[k % 2])
            with out.lock:
                if ok:
                    out.latencies.append(time.perf_counter() - t0)
                else:
                    out.errors.append(f"client {i} edit {k}: {_line(msg)}")

    threads = [threading.Thread(target=one, args=(i,)) for i in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out.wall = time.perf_counter() - t0
    return out


def warm_up(url: str, folder: Path, instruction: str) -> None:
    """One untimed edit on a replica (its first turn loads what the edit needs)."""
    from gradio_client import Client

    client = Client(url, verbose=False)
    sid = client.predict(api_name="/new_session")
    ok, msg = edit_once(client, sid, sign_image(folder / "warm.png", (0, 90, 140)), instruction)
    if not ok:
        raise RuntimeError(f"the warm-up edit on {url} failed: {msg}")


# ------------------------------------------------------------------------------------------------ the database


def stored_versions(db_url: str, home: Path) -> dict[int, tuple[str, bool]]:
    """Every version row: id → (its pixels' SHA-256, whether its file holds those pixels)."""
    import psycopg

    from costa.store import image_sha256

    with psycopg.connect(db_url) as db:
        rows = db.execute("SELECT id, file, sha256 FROM versions").fetchall()
    out = {}
    for vid, file, sha in rows:
        path = Path(file) if Path(file).is_absolute() else home / file
        try:
            with Image.open(path) as img:
                intact = image_sha256(np.asarray(img.convert("RGB"))) == sha
        except OSError:
            intact = False
        out[int(vid)] = (str(sha), intact)
    return out


def _running_turns(db_url: str) -> int:
    import psycopg

    with psycopg.connect(db_url) as db:
        row = db.execute("SELECT COUNT(*) FROM turns WHERE status = 'running'").fetchone()
    return int(row[0]) if row else 0


def _wait(condition: Callable[[], Any], timeout_s: float, step_s: float = 0.02) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        got = condition()
        if got:
            return got
        time.sleep(step_s)
    return None


# ------------------------------------------------------------------------------------------------ probes


def probe_kill(apps: list[LiveApp], db_url: str, folder: Path, kills: int, seconds: float, seed: int) -> Probe:
    """See the module docstring (2.). Replica A (`apps[0]`) is left stopped after the last round."""
    import psycopg
    from gradio_client import Client

    rng = random.Random(seed)
    a, b = apps[0], apps[1]
    bad: list[str] = []
    mid, early = 0, 0
    deadline = time.monotonic() + seconds
    # a large sign: its text turn takes seconds, so the kill lands inside it
    sign = folder / "kill-large.png"
    Image.open(sign_image(folder / "kill.png", (250, 240, 200))).resize((1920, 800)).save(sign)
    with psycopg.connect(db_url, autocommit=True) as watch:  # one connection for the fast polling

        def statuses(sid: str) -> dict[int, str]:
            rows = watch.execute("SELECT id, status FROM turns WHERE session_id = %s", (sid,)).fetchall()
            return {int(t): str(s) for t, s in rows}

        for r in range(MAX_ROUNDS_PER_KILL * kills):  # a round whose turn ends before the signal lands is retried
            if mid >= kills:
                break
            if time.monotonic() > deadline:
                bad.append(f"time bound {seconds:.0f} s reached after {mid} of {kills} kills mid-turn")
                break
            if a.proc is None or a.proc.poll() is not None:
                a.start()
            ca, cb = a.client(), Client(b.url, verbose=False)
            sid = ca.predict(api_name="/new_session")
            ok, msg = edit_once(ca, sid, sign, TEXT_EDITS[0])
            if not ok:
                bad.append(f"round {r}: the first edit on A failed: {_line(msg, 120)}")
                continue
            before = {v["id"]: v["sha256"] for v in cb.predict(sid, api_name="/history")["versions"]}
            finished = set(statuses(sid))
            ca.submit(sid, None, TEXT_EDITS[1], 1.0, 0.8, "", "", api_name="/edit")  # OCR and inpainting: seconds
            tid = _wait(partial(_new_running, statuses, sid, finished), RUNNING_WAIT_S, 0.005)
            if tid is None:
                bad.append(f"round {r}: no turn showed running on A within {RUNNING_WAIT_S:.0f} s")
                continue
            time.sleep(rng.uniform(0.0, 0.2))
            a.kill9()
            killed_running = statuses(sid).get(tid) == "running"
            mid, early = mid + killed_running, early + (not killed_running)
            seen = {v["id"]: v["sha256"] for v in cb.predict(sid, api_name="/history")["versions"]}
            if any(seen.get(vid) != sha for vid, sha in before.items()):
                bad.append(f"round {r}: replica B's history lost versions: {sorted(before)} → {sorted(seen)}")
            for _ in range(40):  # A's database session (and its turn lock) ends once the server sees the socket close
                ok, msg = edit_once(cb, sid, None, ADJUST_EDITS[0])
                if ok or "already running" not in msg:
                    break
                time.sleep(0.25)
            if not ok:
                bad.append(f"round {r}: a turn on replica B after the kill failed: {_line(msg, 160)}")
            status = statuses(sid).get(tid)
            if killed_running and status != "interrupted":
                bad.append(f"round {r}: the killed turn reads {status!r} after B's turn, not 'interrupted'")
    lost = [vid for vid, (_, intact) in stored_versions(db_url, a.home).items() if not intact]
    if lost:
        bad.append(f"versions lost (no file, or other pixels): {lost[:10]}")
    if mid < kills and not bad:
        bad.append(f"{early} turns finished before their kill: {mid} of {kills} kills landed mid-turn")
    detail = (
        f"{mid} kill(s) mid-turn ({early} turn(s) finished first): replica B served the session at once, history "
        f"intact, a turn ran there, the killed turn reads interrupted; versions lost {len(lost)}"
    )
    return Probe("kill -9 mid-turn", not bad, "; ".join(bad) or detail)


def _new_running(statuses: Callable[[str], dict[int, str]], sid: str, finished: set[int]) -> int | None:
    return next((t for t, s in statuses(sid).items() if s == "running" and t not in finished), None)


@dataclass
class Call:
    phase: str
    ok: bool
    message: str
    client: int


def _unclear(message: str, password: str) -> str | None:
    """Why an error the user sees is not one clear sentence, or None when it is."""
    if "\n" in message.strip():
        return "more than one line"
    if "Traceback" in message or "internal error" in message:
        return "an internal error"
    if password in message:
        return "shows the password"
    if len(message) > 400:
        return "over 400 characters"
    return None


def probe_pg_restart(
    server: Any,
    apps: list[LiveApp],
    db_url: str,
    folder: Path,
    clients: int,
    outage_s: float,
    seconds: float,
    instructions: tuple[str, str],
) -> Probe:
    """See the module docstring (3.)."""
    from gradio_client import Client

    from bench.pg_server import PASSWORD

    phase = {"now": "before"}
    calls: list[Call] = []
    lock = threading.Lock()
    stop = threading.Event()

    def one(i: int) -> None:
        app = apps[i % len(apps)]
        try:
            client = Client(app.url, verbose=False)
            sid = client.predict(api_name="/new_session")
        except Exception as e:
            with lock:
                calls.append(Call(phase["now"], False, _short(e), i))
            return
        image: Path | None = sign_image(folder / f"outage{i}.png", (120, 60 + 30 * i % 190, 200))
        k = 0
        while not stop.is_set():
            began = phase["now"]
            ok, msg = edit_once(client, sid, image, instructions[k % 2])
            with lock:  # a call that began before the server came back overlapped the outage
                calls.append(Call(phase["now"] if began == phase["now"] else "outage", ok, msg, i))
            if ok:
                image, k = None, k + 1
            else:
                time.sleep(0.2)

    def done_in(name: str) -> set[int]:
        with lock:
            return {c.client for c in calls if c.phase == name and c.ok}

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    t0 = time.monotonic()
    bad: list[str] = []
    _wait(lambda: len(done_in("before")) == clients, seconds / 3, 0.1)
    before = stored_versions(db_url, apps[0].home)
    phase["now"] = "outage"
    server.stop()
    time.sleep(outage_s)
    server.start()
    phase["now"] = "after"
    recovered = _wait(lambda: len(done_in("after")) == clients, max(seconds - (time.monotonic() - t0), 5.0), 0.1)
    stop.set()
    for t in threads:
        t.join(120)
    after = stored_versions(db_url, apps[0].home)
    running = _running_turns(db_url)
    missing = [vid for vid in before if vid not in after]
    changed = [vid for vid, (sha, _) in before.items() if vid in after and after[vid][0] != sha]
    lost = [vid for vid, (_, intact) in after.items() if not intact]
    errors = [c for c in calls if not c.ok]
    unclear = [(c.message, why) for c in errors if (why := _unclear(c.message, PASSWORD))]
    outage_errors = [c for c in errors if c.phase == "outage"]
    after_errors = [c for c in errors if c.phase == "after"]
    if missing or changed or lost:
        bad.append(f"versions lost: {len(missing)} rows gone, {len(changed)} changed, {len(lost)} files bad")
    if unclear:
        message, why = unclear[0]
        bad.append(f"{len(unclear)} unclear errors ({why}: {_line(message, 160)!r})")
    if running:
        bad.append(f"{running} turn(s) left running after every client's next turn")
    if not recovered:
        bad.append(f"clients without a turn after the restart: {sorted(set(range(clients)) - done_in('after'))}")
    sample = outage_errors[0].message.strip()[:300] if outage_errors else "none seen"
    detail = (
        f"{outage_s:g} s outage: {len(outage_errors)} errors during it, one sentence each ({sample!r}); "
        f"{len(after_errors)} errors after it{f' ({_line(after_errors[0].message, 160)!r})' if after_errors else ''}; "
        "every client edited again; "
        f"versions before {len(before)}, after {len(after)}, lost 0; turns left running 0"
    )
    return Probe("postgres restart", not bad, "; ".join(bad) or detail)


# ------------------------------------------------------------------------------------------------ the run


RUNNERS = ("in_process", "ray")
PROBES = ("restart", "kill9", "raykill")


@dataclass
class Options:
    """What `bench scale` runs (its command-line options)."""

    clients: int = 4
    edits: int = 5
    replicas_max: int = 2
    runners: tuple[str, ...] = RUNNERS
    probes: tuple[str, ...] = PROBES
    kills: int = 2
    outage_s: float = 3.0
    probe_seconds: float = 180.0
    seed: int = 0
    text: bool = False

    @property
    def instructions(self) -> tuple[str, str]:
        return TEXT_EDITS if self.text else ADJUST_EDITS


def start_all(apps: list[LiveApp]) -> None:
    """Start the replicas at once (each start is mostly imports: they overlap)."""
    errors: list[BaseException] = []

    def one(app: LiveApp) -> None:
        try:
            app.start()
        except BaseException as e:  # raised below, after every start has ended
            errors.append(e)

    threads = [threading.Thread(target=one, args=(a,)) for a in apps]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


@dataclass
class Run:
    """One bench run's shared pieces and what it found."""

    opts: Options
    server: Any
    db_url: str
    folder: Path
    loads: list[Load] = field(default_factory=list)
    probes: list[Probe] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    @property
    def home(self) -> Path:
        return self.folder / "home"

    def replicas(self, runner: str, count: int, extra: dict[str, str] | None = None) -> list[LiveApp]:
        """`count` replicas of `runner`, started together and each warmed up by one edit."""
        apps = [make_replica(self.home, self.folder / "logs", f"{runner}{i}", self.db_url, extra) for i in range(count)]
        t0 = time.perf_counter()
        try:
            start_all(apps)  # the ones not measured yet wait idle
            self.lines.append(f"  {runner}: {count} replicas started together in {time.perf_counter() - t0:.1f} s")
            for a in apps:
                warm_up(a.url, self.folder, self.opts.instructions[0])
        except BaseException:
            for a in apps:
                a.stop()
            raise
        return apps

    def measure(self, runner: str, apps: list[LiveApp]) -> None:
        o = self.opts
        for n in range(1, o.replicas_max + 1):
            self.loads.append(run_load(runner, [a.url for a in apps[:n]], o.clients, o.edits, self.folder,
                                       o.instructions))  # fmt: skip

    def in_process(self) -> None:
        o = self.opts
        faults = [p for p in ("restart", "kill9") if p in o.probes]
        apps = self.replicas("in_process", max(o.replicas_max, 2 if faults else 1))
        try:
            self.measure("in_process", apps)
            if "restart" in o.probes:  # the restart first: the kill probe leaves replica A stopped
                self.probes.append(_timed("postgres restart", lambda: probe_pg_restart(
                    self.server, apps[:2], self.db_url, self.folder, max(o.clients, 2), o.outage_s, o.probe_seconds,
                    o.instructions)))  # fmt: skip
            if "kill9" in o.probes:
                self.probes.append(_timed("kill -9 mid-turn", lambda: probe_kill(
                    apps[:2], self.db_url, self.folder, o.kills, o.probe_seconds, o.seed)))  # fmt: skip
        finally:
            for a in apps:
                a.stop()

    def ray(self) -> None:
        from bench.pg_server import PASSWORD
        from bench.scale_ray import bench_ray, nodes, probe_ray_kill

        o = self.opts
        with bench_ray(self.folder) as br:
            self.lines.append(
                f"  ray: a new local Ray in this process ({br.address}, nodes {', '.join(nodes())}) with "
                f"{len(load_served(br.table))} served deployments up in {br.started_s:.1f} s"
            )
            apps = self.replicas("ray", o.replicas_max, br.replica_env())
            try:
                self.measure("ray", apps)
                if "raykill" in o.probes:
                    self.probes.append(_timed("ray worker kill", lambda: probe_ray_kill(
                        apps[0], self.db_url, self.folder, lambda m: _unclear(m, PASSWORD))))  # fmt: skip
            finally:
                for a in apps:
                    a.stop()

    def table(self) -> None:
        self.lines.append("  runner      replicas  clients  turns  errors  wall s  turns/min  p50 s  p95 s")
        for ld in self.loads:
            self.lines.append(
                f"  {ld.runner:10}  {ld.replicas:8d}  {ld.clients:7d}  {len(ld.latencies):5d}  {len(ld.errors):6d}  "
                f"{ld.wall:6.1f}  {ld.per_minute:9.1f}  {_pct(ld.latencies, 50):5.2f}  {_pct(ld.latencies, 95):5.2f}"
            )
        for runner in RUNNERS:
            mine = [ld for ld in self.loads if ld.runner == runner]
            if len(mine) > 1 and mine[0].per_minute > 0:
                one, top = mine[0], mine[-1]
                self.lines.append(
                    f"  {runner} ratio {top.replicas}/1: turns/min {top.per_minute / one.per_minute:.2f}×, p50 "
                    f"{_pct(top.latencies, 50) / _pct(one.latencies, 50):.2f}×, p95 "
                    f"{_pct(top.latencies, 95) / _pct(one.latencies, 95):.2f}×"
                )
        here = {ld.replicas: ld for ld in self.loads if ld.runner == "in_process"}
        for ld in (x for x in self.loads if x.runner == "ray"):
            base = here.get(ld.replicas)
            if base is not None and base.per_minute > 0:
                self.lines.append(
                    f"  ray / in_process at {ld.replicas} replica(s): turns/min {ld.per_minute / base.per_minute:.2f}×"
                    f", p50 {_pct(ld.latencies, 50) / _pct(base.latencies, 50):.2f}×"
                )
        self.lines += [f"    error ({ld.runner}): {e}" for ld in self.loads for e in ld.errors[:5]]


def load_served(table: Path) -> list[str]:
    from costa.models.deployments import load_deployments

    return [f for f, row in load_deployments(table).items() if row.served]


def run_scale(opts: Options) -> tuple[str, str | None]:
    """Run the throughput table and the probes `opts` name; return the report and why it failed (None: held)."""
    from bench.pg_server import fresh_database, pg_server_process
    from bench.scale_ray import ray_missing
    from costa.config import Settings

    kind = "text replacements" if opts.text else "brighter / darker"
    lines = [
        f"scale benchmark: python app.py replicas on one PostgreSQL and one COSTA_HOME ({HOST}); {opts.clients} "
        f"clients × {opts.edits} edits ({kind} on 480×200 signs), client i on replica i mod R; turns at once per "
        f"replica (COSTA_CONCURRENCY) {Settings.from_env().concurrency}; {os.cpu_count()} CPU cores; runners "
        f"{', '.join(opts.runners)}"
    ]
    failure: str | None = None
    no_ray = ray_missing() if "ray" in opts.runners else "not in --runners"
    with tempfile.TemporaryDirectory(prefix="costa-scale-") as tmp, pg_server_process() as server:
        (Path(tmp) / "logs").mkdir()
        run = Run(opts, server, fresh_database(server.url), Path(tmp), lines=lines)
        if "in_process" in opts.runners:
            run.in_process()
        if no_ray is None:
            run.ray()
        run.table()
        empty = [f"{ld.runner} × {ld.replicas}" for ld in run.loads if not ld.latencies]
        if empty:
            failure = f"no turns completed with {', '.join(empty)} replica(s)"
        for p in run.probes:
            lines.append(f"  {'held  ' if p.held else 'FAILED'} {p.name:18} {p.seconds:6.1f} s  {p.detail}")
        if no_ray is not None and "raykill" in opts.probes:
            lines.append(f"  skipped: the Ray runner configuration and its worker-kill probe ({no_ray})")
        failed = [p for p in run.probes if not p.held]
        if failed and failure is None:
            failure = f"{failed[0].name}: {failed[0].detail}"
    return "\n".join(lines), failure


def _timed(name: str, fn: Callable[[], Probe]) -> Probe:
    t0 = time.perf_counter()
    try:
        p = fn()
    except Exception as e:  # a probe that crashes failed
        p = Probe(name, False, f"crashed: {_short(e)}")
    p.seconds = time.perf_counter() - t0
    return p


def _names(allowed: tuple[str, ...]) -> Callable[[str], tuple[str, ...]]:
    def parse(text: str) -> tuple[str, ...]:
        names = tuple(n.strip() for n in text.split(",") if n.strip())
        wrong = [n for n in names if n not in allowed]
        if wrong:
            raise argparse.ArgumentTypeError(f"{', '.join(wrong)}: choose from {', '.join(allowed)}")
        return names

    return parse


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare this benchmark's options."""
    p.add_argument("--clients", type=int, default=4, help="clients editing at once")
    p.add_argument("--edits", type=int, default=5, help="edits per client")
    p.add_argument("--replicas-max", type=int, default=2, help="measure 1 … this many replicas")
    p.add_argument(
        "--runners",
        type=_names(RUNNERS),
        default=RUNNERS,
        help="comma-separated: in_process, ray (default both; ray is skipped, saying why, without ray)",
    )
    p.add_argument("--probes", type=_names(PROBES), default=PROBES,
                   help="comma-separated fault probes: restart (PostgreSQL), kill9 (an app replica), raykill (a Serve "
                   "replica's worker; needs the ray runner); default all")  # fmt: skip
    p.add_argument("--skip-faults", action="store_true", help="only the throughput table (no probe)")
    p.add_argument("--kills", type=int, default=2, help="kill -9 rounds")
    p.add_argument("--outage-seconds", type=float, default=3.0, help="how long PostgreSQL stays down")
    p.add_argument("--probe-seconds", type=float, default=180.0, help="time bound of each probe")
    p.add_argument("--seed", type=int, default=0, help="seed for the kill moments")
    p.add_argument("--text", action="store_true", help="time bench app's text replacements (slower turns)")


def run(args: argparse.Namespace) -> int:
    """Run and print the report; 1 with the reason when an expectation failed."""
    from bench.pg_server import missing_reason
    from costa.errors import InputError

    if args.clients < 1 or args.edits < 1 or args.replicas_max < 1:
        raise InputError(
            f"--clients, --edits and --replicas-max must be at least 1 (got {args.clients}, {args.edits}, "
            f"{args.replicas_max})"
        )
    if not args.runners:
        raise InputError("--runners names no runner: give in_process, ray or both")
    reason = missing_reason()
    if reason is not None:
        raise InputError(f"bench scale needs a PostgreSQL server: {reason}")
    opts = Options(args.clients, args.edits, args.replicas_max, args.runners, () if args.skip_faults else args.probes,
                   args.kills, args.outage_seconds, args.probe_seconds, args.seed, args.text)  # fmt: skip
    report, failure = run_scale(opts)
    print(report)
    if failure is not None:
        print(f"FAILED: {_line(failure, 400)}")
        return 1
    return 0
