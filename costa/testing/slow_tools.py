"""FAKE for tests: a deliberately slow text writer, to show that Stop does not wait for the tool call in flight.

`SlowTextReplacer` is the real `PillowTextReplacer` that first sleeps `COSTA_FAKE_TOOL_SECONDS` (default 5 s), the
stand-in for a tool that takes seconds to minutes; its one-off `load` sleeps `COSTA_FAKE_LOAD_SECONDS` (default 0),
the stand-in for loading a model. `slow_tables(dest)` writes a copy of tool_tables/ whose
`text_replace_pillow` row names this class, for `Services(tables=load_tables(dest))`; `python -m
costa.testing.slow_tools DIR` starts `app.py` on such a copy (the only difference from the real app). Never used
outside tests.

`SteppedTextReplacer` (FAKE) is the same writer after `COSTA_FAKE_STEPS` steps (default 8) of
`COSTA_FAKE_STEP_SECONDS` each (default 0.5 s), reporting `step(i, n)` after each like a diffusion tool (so the page's
progress bar and Stop between steps can be seen); `python -m costa.testing.slow_tools DIR stepped` uses it, with
the other text writer (`OTHER_WRITER`) made planned in that copy, so that every text replacement runs the stepped
fake: with both ready, the search rightly takes the other writer once the fake's seconds have been observed.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from costa.tools.text_edit import PillowTextReplacer
from costa.types import EditState, Subtask, ToolOutput

#: The tool row whose class is replaced, and the class that replaces it.
SLOW_TOOL = "text_replace_pillow"
SLOW_CLASS = "costa.testing.slow_tools:SlowTextReplacer"
STEPPED_CLASS = "costa.testing.slow_tools:SteppedTextReplacer"
OTHER_WRITER = "text_replace_inpaint"
#: Calls of the fake: counters of runs and loads started and finished (finished after Stop: done in the background).
CALLS = {"started": 0, "finished": 0, "loading": 0, "loaded": 0}
_LOCK = threading.Lock()


def fake_seconds(what: str = "TOOL", default: float = 5.0) -> float:
    """How long the fake sleeps before writing (COSTA_FAKE_TOOL_SECONDS, default 5) or in its load
    (COSTA_FAKE_LOAD_SECONDS, default 0), in seconds."""
    return float(os.environ.get(f"COSTA_FAKE_{what}_SECONDS", str(default)))


class SlowTextReplacer(PillowTextReplacer):
    """FAKE: `PillowTextReplacer` after `fake_seconds()` of sleep (labelled as a fake; see the module docstring)."""

    def load(self) -> None:
        with _LOCK:
            CALLS["loading"] += 1
        time.sleep(fake_seconds("LOAD", 0.0))
        super().load()
        with _LOCK:
            CALLS["loaded"] += 1

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        with _LOCK:
            CALLS["started"] += 1
        time.sleep(fake_seconds())
        out = super().run(state, subtask, params)
        with _LOCK:
            CALLS["finished"] += 1
        return out


class SteppedTextReplacer(PillowTextReplacer):
    """FAKE: `PillowTextReplacer` after `COSTA_FAKE_STEPS` sleeps, each reported as a step (see the module doc)."""

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        from costa.models.control import step

        total = int(os.environ.get("COSTA_FAKE_STEPS", "8"))
        for i in range(1, total + 1):
            time.sleep(fake_seconds("STEP", 0.5))
            step(i, total)  # progress to the page; raises ToolStoppedError after Stop
        return super().run(state, subtask, params)


def slow_tables(dest: Path, cls: str = SLOW_CLASS, alone: bool = False) -> Path:
    """A copy of tool_tables/ in `dest` with `SLOW_TOOL` implemented by `cls` (default `SlowTextReplacer`) and, when
    `alone`, `OTHER_WRITER` planned (so `SLOW_TOOL` is the only text writer); returns `dest`."""
    from costa.tables import TABLES_DIR

    shutil.copytree(TABLES_DIR, dest, dirs_exist_ok=True)
    tools = dest / "tools.yaml"
    lines = tools.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.strip() == f"- id: {SLOW_TOOL}")
    at = next(i for i in range(start, len(lines)) if lines[i].strip().startswith("class:"))
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    lines[at] = f'{indent}class: "{cls}"\n'
    if alone:
        other = next(i for i, line in enumerate(lines) if line.strip() == f"- id: {OTHER_WRITER}")
        at = next(i for i in range(other, len(lines)) if lines[i].strip() == "status: ready")
        indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
        lines[at] = f'{indent}status: planned\n{indent}planned_reason: "FAKE tables: {SLOW_TOOL} writes alone"\n'
    tools.write_text("".join(lines), encoding="utf-8")
    return dest


def main(argv: list[str]) -> None:
    """Start app.py (from the repository root) with its tables read from a `slow_tables` copy in argv[0]; argv[1]
    "stepped" makes the tool `SteppedTextReplacer`."""
    import runpy

    import costa.tables

    root = Path(__file__).resolve().parents[2]
    stepped = argv[1:2] == ["stepped"]
    costa.tables.TABLES_DIR = slow_tables(Path(argv[0]), STEPPED_CLASS if stepped else SLOW_CLASS, alone=stepped)
    sys.path.insert(0, str(root))
    runpy.run_path(str(root / "app.py"), run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
