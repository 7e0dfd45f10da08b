"""The Ray half of `bench scale`: one local Ray on 127.0.0.1 for the run, the embedded tools a turn uses served on
it, app replicas started with COSTA_RUNNER=ray, and the probe that kills a Serve replica's worker process mid-call.

The Ray lives in the bench's own process (`ray.init(address="local")`: a new one, never another Ray that may be
running on this machine; its own temporary folder; no dashboard; node address 127.0.0.1), and `ray.shutdown()` ends
it and every process it started. The app replicas join it as drivers through RAY_ADDRESS (its GCS address). The
served families (`SERVED`) are the ones the bench's turns call: the whole-image adjustments and the text
replacement's drawing; everything else (planning, the OCR that finds the text, checks) stays in the app's process.

Worker-kill probe: on a new session, a brighter edit of a 1920 × 800 sign, then a text replacement (seconds of
served text drawing on that size) runs on an app replica; the bench polls the served
replicas' `stats` (through Serve, as any caller) until one of them runs a call, reads that replica's worker PID
(`ToolReplica.worker`) and sends it SIGKILL. Expected: the turn ends (done, the search routing around the dead
call, or a one-sentence error), Serve starts a new replica (a new PID) within `RESTART_BOUND_S`, the next turn on
the same session succeeds, and every version stored before is still there with the same pixels.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.faults import Probe

#: Families served on the bench's Ray: what its turns call (adjustments, and the text replacement's drawing).
SERVED = ("adjust", "text_edit")
#: Logical CPUs of the bench's Ray, and each served replica's share (all of them fit with room to restart one).
RAY_CPUS = 2
REPLICA_CPUS = 0.25
#: Longest wait for Serve to put a new replica in place of the killed one, and for a served call to start.
RESTART_BOUND_S = 90.0
CALL_WAIT_S = 60.0
#: Rounds of the kill probe (a text turn whose served calls all ended before the poll saw one is retried).
MAX_ROUNDS = 3


@dataclass
class BenchRay:
    """The bench's Ray: its GCS address (the replicas' RAY_ADDRESS) and the deployments table the replicas read."""

    address: str
    table: Path
    started_s: float

    def replica_env(self) -> dict[str, str]:
        """What an app replica is given to send the served families' calls to this Ray."""
        return {"COSTA_RUNNER": "ray", "RAY_ADDRESS": self.address, "COSTA_DEPLOYMENTS_TABLE": str(self.table)}


def ray_missing() -> str | None:
    """Why the Ray configuration cannot run here (one line), or None."""
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        return "ray is not installed (pip install -r requirements-ray.txt)"
    return None


def write_table(dest: Path) -> Path:
    """A copy of tool_tables/deployments.csv serving `SERVED` (one CPU replica each, no GPU), the rest in process."""
    from costa.models.deployments import cpu_layout, load_deployments

    dest.write_text(cpu_layout(load_deployments(), SERVED, REPLICA_CPUS, "bench scale layout"), encoding="utf-8")
    return dest


@contextmanager
def bench_ray(folder: Path) -> Iterator[BenchRay]:
    """Start a new Ray in this process on 127.0.0.1 with `SERVED` deployed; shut it down at the end."""
    from costa.models.ray_runner import LOOPBACK, SINGLE_MACHINE_ENV

    os.environ.setdefault(*SINGLE_MACHINE_ENV)  # before the first import of ray
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.pop("RAY_ADDRESS", None)  # a new Ray here, whatever the caller's environment names
    import ray
    from ray import serve

    from costa.models.deployments import load_deployments
    from costa.models.replica import start_deployments
    from costa.tables import load_tables

    table = write_table(folder / "deployments.csv")
    temp = Path(f"/tmp/costa-ray-{os.getpid()}")  # short: Ray's socket paths must fit 107 bytes
    t0 = time.perf_counter()
    ray.init(address="local", include_dashboard=False, _node_ip_address=LOOPBACK, num_cpus=RAY_CPUS,
             log_to_driver=False, _temp_dir=str(temp))  # fmt: skip
    try:
        start_deployments(load_deployments(table), load_tables().tools)
        yield BenchRay(ray.get_runtime_context().gcs_address, table, time.perf_counter() - t0)
    finally:
        try:
            serve.shutdown()
        finally:
            ray.shutdown()
            shutil.rmtree(temp, ignore_errors=True)


def nodes() -> list[str]:
    """The addresses of the bench Ray's nodes (the bench checks they are all 127.0.0.1)."""
    import ray

    return sorted({str(n["NodeManagerAddress"]) for n in ray.nodes() if n.get("Alive")})


# ------------------------------------------------------------------------------------------------ the probe


def _handles() -> dict[str, Any]:
    from ray import serve

    from costa.models.ray_runner import app_name

    return {f: serve.get_deployment_handle(f, app_name(f)) for f in SERVED}


def _ask(handle: Any, method: str, timeout_s: float = 10.0) -> Any:
    return getattr(handle, method).remote().result(timeout_s=timeout_s)


def busy_replica(handles: Mapping[str, Any], stop: Callable[[], bool], timeout_s: float) -> tuple[str, int] | None:
    """(family, worker PID) of the first served replica seen running a call, polling until `stop()` or the time."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not stop():
        for family, h in handles.items():
            if _ask(h, "stats")["running"] > 0:
                return family, int(_ask(h, "worker")["pid"])
        time.sleep(0.01)
    return None


def wait_restarted(family: str, old_pid: int, timeout_s: float) -> tuple[int, float] | None:
    """(new PID, seconds) once `family`'s deployment answers from a worker other than `old_pid`; None past the time."""
    from ray import serve

    from costa.models.ray_runner import app_name

    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        try:
            pid = int(_ask(serve.get_deployment_handle(family, app_name(family)), "worker", 5.0)["pid"])
            if pid != old_pid:
                return pid, time.monotonic() - t0
        except Exception:  # the dead replica, or none yet: Serve is replacing it
            pass
        time.sleep(0.2)
    return None


def tool_results(db_url: str, session_id: str, instruction: str) -> list[tuple[str, str, bool, str]]:
    """(tool, runner, passed, first reason) of each tool attempt the session's last turn of `instruction` recorded."""
    import json

    import psycopg

    with psycopg.connect(db_url) as db:
        row = db.execute(
            "SELECT events FROM turns WHERE session_id = %s AND instruction = %s ORDER BY id DESC LIMIT 1",
            (session_id, instruction),
        ).fetchone()
    events = json.loads(row[0]) if row else []
    return [
        (e["tool"], e.get("runner", ""), bool(e["passed"]), (e.get("reasons") or [""])[0])
        for e in events
        if e.get("kind") == "tool_finished"
    ]


@dataclass
class KillRound:
    """What one round of the worker-kill probe saw."""

    family: str = ""
    pid: int = 0
    turn: str = ""  # "done", or the one sentence the user saw
    restart: tuple[int, float] | None = None  # the new replica's PID, seconds after the kill
    next_ok: bool = False
    next_s: float = 0.0
    kept: bool = False
    tools: list[tuple[str, str, bool, str]] = field(default_factory=list)

    @property
    def recorded(self) -> list[tuple[str, str, bool, str]]:
        """The tool attempts the kill failed, as the search recorded them."""
        return [t for t in self.tools if not t[2] and "died during the call" in t[3]]


def kill_round(app: Any, db_url: str, sign: Path, check: Callable[[str], str | None]) -> KillRound | str:
    """One round (see the module docstring): a `KillRound`, or why no kill landed mid-call (the round is retried).
    `check`: why a message the user saw is not one clear sentence (None when it is)."""
    import threading

    from bench.scale import ADJUST_EDITS, TEXT_EDITS, edit_once

    handles = _handles()
    ca = app.client()
    sid = ca.predict(api_name="/new_session")
    ok, msg = edit_once(ca, sid, sign, ADJUST_EDITS[0])
    if not ok:
        return f"the first edit failed: {msg[:160]}"
    before = {v["id"]: v["sha256"] for v in ca.predict(sid, api_name="/history")["versions"]}
    job = ca.submit(sid, None, TEXT_EDITS[0], 1.0, 0.8, "", "", api_name="/edit")
    busy = busy_replica(handles, job.done, CALL_WAIT_S)
    if busy is None:
        job.result()
        return "the turn's served calls ended before the poll saw one running"
    out = KillRound(*busy)
    os.kill(out.pid, signal.SIGKILL)
    watch = threading.Thread(target=lambda: setattr(out, "restart", wait_restarted(out.family, out.pid,
                                                                                   RESTART_BOUND_S)))  # fmt: skip
    watch.start()  # timed from the kill, while the turn goes on
    try:
        result, report = job.result()
        if report.get("status") == "proposed":
            ca.predict(sid, api_name="/accept")
        out.turn = (
            "done"
            if report.get("status") in ("done", "proposed") and result is not None
            else str(report.get("message") or report.get("status"))
        )
    except Exception as e:  # the call's error as the client shows it
        out.turn = str(e).strip() or type(e).__name__
    if out.turn != "done" and (why := check(out.turn)):
        out.turn = f"UNCLEAR ({why}): {out.turn[:200]}"
    out.tools = tool_results(db_url, sid, TEXT_EDITS[0])
    watch.join()
    t0 = time.perf_counter()
    out.next_ok, msg = edit_once(ca, sid, None, ADJUST_EDITS[1])
    out.next_s = time.perf_counter() - t0
    if not out.next_ok:
        out.turn += f"; the next turn failed: {msg[:160]}"
    seen = {v["id"]: v["sha256"] for v in ca.predict(sid, api_name="/history")["versions"]}
    out.kept = all(seen.get(vid) == sha for vid, sha in before.items())
    return out


def probe_ray_kill(app: Any, db_url: str, folder: Path, check: Callable[[str], str | None]) -> Probe:
    """Kill a Serve replica's worker mid-call on `app` (a COSTA_RUNNER=ray replica); see the module docstring."""
    from PIL import Image

    from bench.app import sign_image

    sign = folder / "raykill-large.png"
    Image.open(sign_image(folder / "raykill.png", (240, 230, 210))).resize((1920, 800)).save(sign)
    misses: list[str] = []
    for _ in range(MAX_ROUNDS):
        got = kill_round(app, db_url, sign, check)
        if isinstance(got, str):
            misses.append(got)
            continue
        bad = []
        if not got.recorded:
            bad.append(f"no tool attempt of the turn recorded the dead replica: {got.tools}")
        if got.turn.startswith("UNCLEAR"):
            bad.append(f"the killed turn's message is not one sentence: {got.turn}")
        if got.restart is None:
            bad.append(f"Serve did not start a new {got.family} replica within {RESTART_BOUND_S:.0f} s")
        if not got.next_ok:
            bad.append(f"the next turn failed ({got.turn})")
        if not got.kept:
            bad.append("versions stored before the kill changed or went missing")
        ended = "done (the search routed around the dead call)" if got.turn == "done" else repr(got.turn[:200])
        new = f"new pid {got.restart[0]} {got.restart[1]:.1f} s after the kill" if got.restart else "none"
        tools = ", ".join(f"{t} on {r} {'passed' if ok else 'failed'}" for t, r, ok, _ in got.tools)
        said = got.recorded[0][3] if got.recorded else ""
        detail = (
            f"killed pid {got.pid} of costa-{got.family} mid-call: recorded as {said!r}; attempts: {tools}; the turn "
            f"ended {ended}; Serve replaced the replica ({new}); the next turn "
            f"{'succeeded' if got.next_ok else 'FAILED'} in {got.next_s:.1f} s; history "
            f"{'intact' if got.kept else 'CHANGED'}"
        )
        return Probe("ray worker kill", not bad, "; ".join(bad) or detail)
    return Probe("ray worker kill", False, f"no kill landed mid-call in {MAX_ROUNDS} rounds: {'; '.join(misses)}")
