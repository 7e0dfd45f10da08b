"""Request batching on a real local Ray (127.0.0.1, 1 CPU): the clip family served with batches of up to 8 calls, its
tool the real `ClipCaptionChecker` on a tiny random-weight CLIP (FAKE weights: the real class and hub layout,
`costa.testing.neural_readouts.build_clip`). Concurrent callers' calls run as a few batches, one pass of the model
each, and every caller gets the answer the tool gives it in process; a bad call in a batch fails alone.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest

from costa.models.ray_runner import SINGLE_MACHINE_ENV  # imports no ray

os.environ.setdefault(*SINGLE_MACHINE_ENV)  # read when ray is first imported: the test Ray binds 127.0.0.1
ray = pytest.importorskip("ray", reason="ray is not installed (pip install -r requirements-ray.txt)")
pytest.importorskip("transformers", reason="the neural extra is not installed (requirements-neural.txt)")

from costa.config import Settings  # noqa: E402
from costa.errors import ToolError  # noqa: E402
from costa.models.deployments import DEPLOYMENTS_FILE, cpu_layout, load_deployments  # noqa: E402
from costa.models.ray_runner import RayRunner, app_name, connect  # noqa: E402
from costa.models.replica import start_deployments  # noqa: E402
from costa.services import Services  # noqa: E402
from costa.tables import load_tables  # noqa: E402
from costa.types import EditState, Subtask, ToolOutput  # noqa: E402

pytestmark = [pytest.mark.extras, pytest.mark.neural]
#: Calls sent at once, and the batch wait of the test's table: long enough that calls started together on a loaded
#: machine meet in one queue (the shipped table waits 20 ms).
CALLS, WAIT_MS = 6, 1500


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Services, RayRunner]]:
    """A local Ray serving the clip family (tiny CLIP, batches of up to 8) and in-process services on the same
    weights, for the answers to compare with."""
    from ray import serve

    from costa.testing.neural_readouts import build_clip

    models = tmp_path_factory.mktemp("models")
    build_clip(models)
    env = {"COSTA_MODELS_DIR": str(models), "COSTA_DEVICE": "cpu", "HF_HUB_OFFLINE": "1",
           "RAY_USAGE_STATS_ENABLED": "0"}  # fmt: skip
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # the replica's worker inherits them from here
    rows = load_deployments()
    assert (rows["clip"].max_batch, rows["clip"].cpu_max_batch, rows["clip"].batch_wait_s) == (8, 8, 0.02)  # shipped
    table = tmp_path_factory.mktemp("tables") / DEPLOYMENTS_FILE
    layout = cpu_layout(rows, ("clip",), 0.1, "FAKE test layout")
    # no batching on GPUs, batches of 8 on CPUs: the replica batches only if `--cpu-only` picks the CPU size
    table.write_text(layout.replace("clip,serve,1,0,0.1,8,8,,", f"clip,serve,1,0,0.1,1,8,{WAIT_MS},"), encoding="utf-8")
    served_rows = load_deployments(table)
    clip = served_rows["clip"]
    assert (clip.max_batch, clip.cpu_max_batch, clip.batch_wait_s) == (1, 8, WAIT_MS / 1000)
    assert connect(None, start=True, num_cpus=1)
    try:
        (started,) = start_deployments(served_rows, load_tables().tools, cpu_only=True)
        assert started.batch == 8 and "no GPU and 0.1 CPU each, batches of up to 8;" in started.line()
        yield Services(Settings.from_env()), RayRunner(served_rows, timeout_seconds=120)
    finally:
        serve.shutdown()
        ray.shutdown()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _calls() -> list[tuple[EditState, Subtask]]:
    rng = np.random.default_rng(1)
    captions = ["a red dog", "a small grey house by the sea at dusk", "", "a cat", "two people on a bench", "rain"]
    return [
        (EditState(rng.integers(0, 255, (80 + 8 * i, 120, 3), dtype=np.uint8)),
         Subtask(id=f"s{i}", kind="caption_consistency_check", target=c))
        for i, c in enumerate(captions)
    ]  # fmt: skip


def test_concurrent_calls_run_as_batches_and_each_caller_gets_its_own_answer(served) -> None:
    from ray import serve

    services, runner = served
    tool = services.tool("clip_consistency")
    params = tool.spec.params_for_attempt(0)
    calls = _calls()
    assert len(calls) == CALLS
    runner.load(tool)  # the model loads once on the replica before the calls race
    got: dict[int, ToolOutput | BaseException] = {}
    gate = threading.Barrier(CALLS)

    def one(i: int) -> None:
        gate.wait()
        try:
            got[i] = runner.run(tool, calls[i][0], calls[i][1], params)
        except BaseException as e:  # compared below
            got[i] = e

    threads = [threading.Thread(target=one, args=(i,)) for i in range(CALLS)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    stats = serve.get_deployment_handle("clip", app_name("clip")).stats.remote().result(timeout_s=30)
    assert stats["batched_calls"] == CALLS and stats["batches"] < CALLS and stats["largest_batch"] >= 2, stats
    for i, (state, subtask) in enumerate(calls):
        if not subtask.target:  # the bad call fails alone, as in process
            assert isinstance(got[i], ToolError) and "needs the caption" in str(got[i]), got[i]
            continue
        here = tool(state, subtask, params)
        there = got[i]
        assert isinstance(there, ToolOutput), there
        assert there.artifacts == here.artifacts and there.notes == here.notes
    assert stats["failed"] == 1 and stats["finished"] == CALLS - 1, stats
    print(f"clip: {CALLS} concurrent calls in {stats['batches']} batch(es), largest {stats['largest_batch']}, "
          f"{wall:.2f} s")  # fmt: skip
