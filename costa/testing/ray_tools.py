"""FAKES for the Ray runner's tests: a tool that raises on its replica, and tables that register it.

`BrokenDeblurrer` is the real `UnsharpDeblurrer` whose `run` raises `RuntimeError` (a bug in a tool's code, not a
recorded `ToolError`): on a Serve replica it must come back as a `ToolError` of one sentence that the search records
and routes around (to `wiener_deblur`, the family's other filter). `broken_tables(dest, served)` writes a copy of
tool_tables/ whose `unsharp_deblur` row names this class, and whose deployments table serves the `served` families
with one small CPU replica each (a 1-CPU test Ray places them all). Never used outside tests.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from costa.models.deployments import DEPLOYMENTS_FILE, cpu_layout, load_deployments
from costa.tools.deblur import UnsharpDeblurrer, WienerDeblurrer
from costa.types import EditState, Subtask, ToolOutput

BROKEN_TOOL = "unsharp_deblur"
BROKEN_CLASS = "costa.testing.ray_tools:BrokenDeblurrer"
SLOW_CLASS = "costa.testing.ray_tools:SlowDeblurrer"
STEPPED_CLASS = "costa.testing.ray_tools:SteppedDeblurrer"
#: CPUs each test replica holds: several fit a 1-CPU Ray.
TEST_REPLICA_CPUS = 0.1


class BrokenDeblurrer(UnsharpDeblurrer):
    """FAKE: raises `RuntimeError` instead of sharpening (see the module docstring)."""

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        raise RuntimeError("FAKE: the broken deblurrer always fails")


def broken_tables(dest: Path, served: tuple[str, ...]) -> Path:
    """A copy of tool_tables/ in `dest` with `BROKEN_TOOL` implemented by `BrokenDeblurrer` and only `served`
    families served (no GPU, `TEST_REPLICA_CPUS` each); returns `dest`."""
    from costa.tables import TABLES_DIR

    shutil.copytree(TABLES_DIR, dest, dirs_exist_ok=True)
    tools = dest / "tools.yaml"
    lines = tools.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.strip() == f"- id: {BROKEN_TOOL}")
    at = next(i for i in range(start, len(lines)) if lines[i].strip().startswith("class:"))
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    lines[at] = f'{indent}class: "{BROKEN_CLASS}"\n'
    tools.write_text("".join(lines), encoding="utf-8")
    table = dest / DEPLOYMENTS_FILE
    layout = cpu_layout(load_deployments(table), served, TEST_REPLICA_CPUS, "FAKE test layout")
    table.write_text(layout, encoding="utf-8")
    return dest


class SlowDeblurrer(WienerDeblurrer):
    """FAKE: the real `WienerDeblurrer` after `COSTA_FAKE_TOOL_SECONDS` of sleep (read on the replica, so set it
    before Ray starts): the stand-in for a long model call, to time out, stop or kill mid-call."""

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        from costa.testing.slow_tools import fake_seconds

        time.sleep(fake_seconds())
        return super().run(state, subtask, params)


class SteppedDeblurrer(WienerDeblurrer):
    """FAKE: the real `WienerDeblurrer` after `COSTA_FAKE_STEPS` sleeps of `COSTA_FAKE_STEP_SECONDS`, each reported
    as a step like a diffusion tool's (read on the replica: set them before Ray starts)."""

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        import os

        from costa.models.control import step
        from costa.testing.slow_tools import fake_seconds

        total = int(os.environ.get("COSTA_FAKE_STEPS", "8"))
        for i in range(1, total + 1):
            time.sleep(fake_seconds("STEP", 0.5))
            step(i, total)  # progress streamed to the caller; raises ToolStoppedError once the request is cancelled
        return super().run(state, subtask, params)
