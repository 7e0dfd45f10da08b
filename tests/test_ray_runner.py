"""The Ray Serve runner on a real local Ray (one per module: 127.0.0.1, 1 CPU, no dashboard, no HTTP proxy).

The deblur family is served with one 0.1-CPU replica (a `broken_tables` copy of tool_tables/: `unsharp_deblur` is the
FAKE `BrokenDeblurrer`, raising on its replica); `SlowDeblurrer` (FAKE: the real Wiener filter after a 20 s sleep)
stands in for a long model call. Everything else is the real code: Serve, the replica, the search and the tools.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from costa.models.ray_runner import SINGLE_MACHINE_ENV  # imports no ray

os.environ.setdefault(*SINGLE_MACHINE_ENV)  # read when ray is first imported: the test Ray binds 127.0.0.1
ray = pytest.importorskip("ray", reason="ray is not installed (pip install -r requirements-ray.txt)")

from costa.agent import run_turn  # noqa: E402
from costa.config import Settings  # noqa: E402
from costa.errors import ToolError  # noqa: E402
from costa.events import ToolFailed, ToolFinished, ToolProgress, TurnDone  # noqa: E402
from costa.models.control import ToolStoppedError, TurnControl, run_stoppable  # noqa: E402
from costa.models.deployments import load_deployments  # noqa: E402
from costa.models.ray_runner import RAY, RayRunner, app_name, connect  # noqa: E402
from costa.models.replica import start_deployments  # noqa: E402
from costa.models.runner import IN_PROCESS, InProcessRunner  # noqa: E402
from costa.services import Services  # noqa: E402
from costa.tables import Tables, load_tables  # noqa: E402
from costa.testing.calibration import fake_table  # noqa: E402
from costa.testing.ray_tools import BROKEN_TOOL, SLOW_CLASS, STEPPED_CLASS, broken_tables  # noqa: E402
from costa.tools import tool_class  # noqa: E402
from costa.tools.base import Tool  # noqa: E402
from costa.turn.records import TurnConfig  # noqa: E402
from costa.types import EditState, Plan, Subtask  # noqa: E402
from tests.text_helpers import Line, background, draw  # noqa: E402

pytestmark = pytest.mark.extras

#: How long the slow FAKE sleeps on its replica, and the most a timed-out, stopped or killed call may take to end.
SLOW_SECONDS = 20.0
END_BOUND = 5.0
#: The stepped FAKE's steps and seconds per step (4 s in all).
STEPS, STEP_SECONDS = 8, 0.5
DEBLUR = Subtask(id="s1", kind="image_deblurring")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Tables, Path]]:
    """One local Ray for the module, with the deblur family's deployment started; prints what it cost."""
    from ray import serve

    fakes = {
        "COSTA_FAKE_TOOL_SECONDS": str(SLOW_SECONDS),
        "COSTA_FAKE_STEPS": str(STEPS),
        "COSTA_FAKE_STEP_SECONDS": str(STEP_SECONDS),
        "RAY_USAGE_STATS_ENABLED": "0",
    }
    saved = {k: os.environ.get(k) for k in fakes}
    os.environ.update(fakes)  # the replicas' workers inherit them from here
    tables_dir = broken_tables(tmp_path_factory.mktemp("ray") / "tables", ("deblur",))
    tables = load_tables(tables_dir)
    t0 = time.perf_counter()
    assert connect(None, start=True, num_cpus=1)  # no Ray was running: started here, on 127.0.0.1
    assert [n["NodeManagerAddress"] for n in ray.nodes()] == ["127.0.0.1"]
    started = start_deployments(load_deployments(tables_dir / "deployments.csv"), tables.tools)
    print(f"ray: local Ray and {len(started)} deployment(s) up in {time.perf_counter() - t0:.1f} s")
    try:
        yield tables, tables_dir
    finally:
        t1 = time.perf_counter()
        serve.shutdown()
        ray.shutdown()
        print(f"ray: shut down in {time.perf_counter() - t1:.1f} s")
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def blurred_sign() -> np.ndarray:
    import cv2

    return cv2.GaussianBlur(
        draw(background("flat", 240, 120), [Line("SALE", (30, 25), 48, (190, 20, 20))]), (0, 0), 1.8
    )


def make(tables: Tables, tool_id: str, impl: str | None = None) -> Tool:
    spec = tables.tools[tool_id]
    if impl is not None:
        spec = dataclasses.replace(spec, impl=impl)
    return tool_class(spec)(spec)


def runner_for(tables_dir: Path, timeout: float = 60.0) -> RayRunner:
    return RayRunner(load_deployments(tables_dir / "deployments.csv"), timeout_seconds=timeout)


def test_a_served_tool_gives_what_it_gives_in_process(cluster) -> None:
    tables, tables_dir = cluster
    runner, tool, image = runner_for(tables_dir), make(tables, "wiener_deblur"), blurred_sign()
    params = tool.spec.params_for_attempt(0)
    here = InProcessRunner().run(tool, EditState(image), DEBLUR, params)
    assert runner.where(tool.spec) == RAY and runner.missing(tool) is None
    runner.load(tool)
    there = runner.run(tool, EditState(image), DEBLUR, params)
    assert there.image is not None and here.image is not None
    assert np.array_equal(there.image, here.image)
    assert there.edited_region is not None and here.edited_region is not None
    assert np.array_equal(there.edited_region, here.edited_region)
    assert set(there.artifacts) == set(here.artifacts)
    # a family the table keeps in process runs here, under the Ray runner too
    assert runner.where(tables.tools["recolor_lab"]) == IN_PROCESS


def test_a_tool_that_raises_on_its_replica_is_a_failure_the_search_routes_around(cluster, tmp_path: Path) -> None:
    tables, tables_dir = cluster
    settings = Settings(
        home=tmp_path / "home",
        reflect=False,
        calibration_table=fake_table(),
        runner="ray",
        deployments_table=tables_dir / "deployments.csv",
    )
    services = Services(settings, tables)
    assert isinstance(services.runner, RayRunner)
    with pytest.raises(ToolError, match=r"^unsharp_deblur raised RuntimeError on its costa-deblur replica: FAKE"):
        tool = services.tool(BROKEN_TOOL)
        services.runner.run(tool, EditState(blurred_sign()), DEBLUR, tool.spec.params_for_attempt(0))
    events = list(run_turn(services, blurred_sign(), Plan(subtasks=(DEBLUR,)), TurnConfig(alpha=1.0, reflect=False)))
    finished = [e for e in events if isinstance(e, ToolFinished)]
    broken = [e for e in finished if e.tool == BROKEN_TOOL]
    assert broken and not any(e.passed for e in broken), "the search never tried the broken tool"
    assert all(e.runner == RAY for e in finished)
    assert "raised RuntimeError on its costa-deblur replica" in broken[0].reasons[0]
    assert "\n" not in broken[0].reasons[0]  # one sentence, no remote traceback
    assert any(isinstance(e, ToolFailed) and e.tool == BROKEN_TOOL for e in events)
    turn = events[-1]
    assert isinstance(turn, TurnDone) and turn.ok, "the search did not route around the broken tool"
    assert any(e.passed and e.tool == "wiener_deblur" for e in finished)


def test_a_call_past_the_timeout_is_cancelled_and_fails(cluster) -> None:
    tables, tables_dir = cluster
    runner, slow = runner_for(tables_dir, timeout=1.0), make(tables, "wiener_deblur", SLOW_CLASS)
    t0 = time.perf_counter()
    with pytest.raises(ToolError, match=r"no answer from Ray Serve deployment 'costa-deblur' within 1 s"):
        runner.run(slow, EditState(blurred_sign()), DEBLUR, slow.spec.params_for_attempt(0))
    assert time.perf_counter() - t0 < END_BOUND


def test_stop_cancels_the_remote_call(cluster) -> None:
    tables, tables_dir = cluster
    runner, slow = runner_for(tables_dir), make(tables, "wiener_deblur", SLOW_CLASS)
    from ray import serve

    handle = serve.get_deployment_handle("deblur", app_name("deblur"))
    before = handle.stats.remote().result(timeout_s=30)
    control = TurnControl()
    threading.Timer(1.0, control.stop.set).start()
    t0 = time.perf_counter()
    call = lambda: runner.run(slow, EditState(blurred_sign()), DEBLUR, slow.spec.params_for_attempt(0))  # noqa: E731
    with pytest.raises(ToolStoppedError):
        run_stoppable(call, control, "s1", "wiener_deblur", 0)
    assert time.perf_counter() - t0 < END_BOUND
    deadline = time.monotonic() + END_BOUND  # the worker thread saw the Stop and cancelled the Serve request
    while handle.stats.remote().result(timeout_s=30)["cancelled"] == before["cancelled"]:
        assert time.monotonic() < deadline, "the replica never saw the request cancelled"
        time.sleep(0.1)


def test_progress_streams_back_while_the_call_runs_and_stop_ends_it_at_the_next_step(cluster) -> None:
    tables, tables_dir = cluster
    from ray import serve

    runner, stepped = runner_for(tables_dir), make(tables, "wiener_deblur", STEPPED_CLASS)
    seen: list[tuple[float, object]] = []
    control = TurnControl(on_event=lambda ev: seen.append((time.perf_counter(), ev)))
    call = lambda: runner.run(stepped, EditState(blurred_sign()), DEBLUR, stepped.spec.params_for_attempt(0))  # noqa: E731
    out = run_stoppable(call, control, "s1", "wiener_deblur", 0)
    returned = time.perf_counter()
    progress = [(t, ev) for t, ev in seen if isinstance(ev, ToolProgress)]
    assert out.image is not None and [ev.done for _, ev in progress] == list(range(1, STEPS + 1))
    assert all(ev.tool == "wiener_deblur" and ev.subtask_id == "s1" for _, ev in progress)
    # the first step reached the turn while the call still had most of its steps to go: streamed, not replayed
    assert returned - progress[0][0] > (STEPS - 3) * STEP_SECONDS, returned - progress[0][0]
    handle = serve.get_deployment_handle("deblur", app_name("deblur"))
    running = handle.stats.remote().result(timeout_s=30)["running"]
    stopping = TurnControl()
    threading.Timer(2 * STEP_SECONDS, stopping.stop.set).start()
    with pytest.raises(ToolStoppedError):
        run_stoppable(call, stopping, "s1", "wiener_deblur", 0)
    stopped = time.perf_counter()
    while handle.stats.remote().result(timeout_s=30)["running"] > running:  # the replica's thread ends at its next step
        assert time.perf_counter() - stopped < 2 * STEP_SECONDS + 1.0, "the stopped call ran on to its end"
        time.sleep(0.05)


def listening(pid: int) -> set[tuple[str, int]]:
    """(address, port) of every TCP socket process `pid` listens on (Linux: its socket inodes in /proc/net/tcp*)."""
    import socket

    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            link = os.readlink(fd)
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[len("socket:[") : -1])
    out = set()
    for table, family in (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6)):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] != "0A" or fields[9] not in inodes:  # 0A: LISTEN
                continue
            host, port = fields[1].split(":")
            raw = bytes.fromhex(host)
            words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))  # each 32-bit word is host-order
            out.add((socket.inet_ntop(family, words), int(port, 16)))
    return out


def test_a_replica_listens_on_the_nodes_address_only(cluster) -> None:
    """Serve hard-codes "[::]:0" for a replica's inter-deployment gRPC server; the replica binds it to its node's
    address (127.0.0.1 here), so nothing of a replica is reachable from another machine."""
    from ray import serve

    handle = serve.get_deployment_handle("deblur", app_name("deblur"))
    worker = handle.worker.remote().result(timeout_s=30)
    assert worker["grpc_host"] == "127.0.0.1"
    addresses = listening(worker["pid"])
    assert addresses, "the replica's worker listens on nothing: the check would prove nothing"
    assert {host for host, _ in addresses} <= {"127.0.0.1", "::ffff:127.0.0.1"}, addresses


def test_a_replica_killed_mid_call_is_a_failure_and_the_next_call_works(cluster) -> None:
    """SIGKILL to the worker process of the replica running the call (as the kernel's OOM killer would)."""
    import signal

    from ray import serve

    tables, tables_dir = cluster
    runner, slow = runner_for(tables_dir), make(tables, "wiener_deblur", SLOW_CLASS)
    handle = serve.get_deployment_handle("deblur", app_name("deblur"))
    errors: list[ToolError] = []

    def call() -> None:
        try:
            runner.run(slow, EditState(blurred_sign()), DEBLUR, slow.spec.params_for_attempt(0))
        except ToolError as e:
            errors.append(e)

    started = handle.stats.remote().result(timeout_s=30)["started"]  # an earlier test's stopped call may still run
    worker = threading.Thread(target=call)
    worker.start()
    deadline = time.monotonic() + END_BOUND
    while handle.stats.remote().result(timeout_s=30)["started"] == started:  # until this call runs on the replica
        assert time.monotonic() < deadline, "the call never started on the replica"
        time.sleep(0.05)
    pid = handle.worker.remote().result(timeout_s=30)["pid"]
    os.kill(pid, signal.SIGKILL)
    worker.join(END_BOUND)
    assert not worker.is_alive() and len(errors) == 1
    assert "replica running wiener_deblur died during the call" in str(errors[0])
    t0 = time.perf_counter()
    tool = make(tables, "wiener_deblur")
    out = runner.run(tool, EditState(blurred_sign()), DEBLUR, tool.spec.params_for_attempt(0))
    assert out.image is not None  # Serve started a new replica and the call reached it
    assert handle.worker.remote().result(timeout_s=30)["pid"] != pid
    print(f"ray: the call after the kill answered in {time.perf_counter() - t0:.1f} s")


def test_an_absent_deployment_is_a_reason_not_a_hang(cluster) -> None:
    tables, tables_dir = cluster
    runner = runner_for(tables_dir)
    rows = dict(runner.rows)
    rows["depth"] = dataclasses.replace(rows["depth"], placement="serve", replicas=1, cpus=0.1)
    runner.rows = rows
    why = runner.missing(make(tables, "midas"))
    assert why is not None and "'costa-depth' is not running" in why and "python -m costa serve" in why
    ok, said = runner.reachable()
    assert ok and "deployments running: deblur" in said


def test_costa_edit_and_doctor_with_costa_runner_ray(cluster, tmp_path: Path) -> None:
    """The command line on the module's Ray: `costa edit` sends the deblur calls there and says so; `doctor` says
    the runner is reachable and which deployments run."""
    import subprocess
    import sys

    from PIL import Image

    _, tables_dir = cluster
    root = Path(__file__).resolve().parents[1]
    image = tmp_path / "sign.png"
    Image.fromarray(blurred_sign()).save(image)
    env = os.environ | {
        "COSTA_RUNNER": "ray",
        "COSTA_DEPLOYMENTS_TABLE": str(tables_dir / "deployments.csv"),
        "COSTA_REFLECT": "0",
        "PYTHONPATH": str(root),
    }
    argv = [sys.executable, "-m", "costa", "edit", str(image), "deblur the image", "-o", str(tmp_path / "out.png")]
    edit = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=240)
    assert edit.returncode == 0, edit.stdout + edit.stderr
    assert "deblur (attempt 0) on ray:" in edit.stdout, edit.stdout
    assert (tmp_path / "out.png").is_file()
    doctor = subprocess.run(
        [sys.executable, "-m", "costa", "doctor"], cwd=root, env=env, capture_output=True, text=True, timeout=240
    )
    assert doctor.returncode == 0, doctor.stderr
    line = next(x for x in doctor.stdout.splitlines() if x.startswith("runner:"))
    assert line.startswith("runner: ray (COSTA_RUNNER): reachable:") and "deployments running: deblur" in line, line
