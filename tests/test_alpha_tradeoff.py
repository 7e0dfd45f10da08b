"""The α slider shows a real trade-off wherever the tables hold one (issue 8, item 8).

"make it brighter and upscale it 2x": with graded quality, a table where Real-ESRGAN grades higher than Lanczos (and
is slower) makes α=0 (quality only) pick Real-ESRGAN and α=2 (cost only) pick Lanczos — in the app's α preview and in
the search it predicts.
"""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import pytest

from costa.config import Settings
from costa.planner import plan_with_rules
from costa.services import Services
from costa.session import SessionCore as Workspace
from costa.store import Store
from costa.tables import BENCHMARK_FILE, SUBTASKS_FILE, TABLES_DIR, TOOLS_FILE, load_tables
from costa.testing.calibration import fake_table
from costa.turn.records import UserRegion

INSTRUCTION = "make it brighter and upscale it 2x"


def _tables_with(tmp: Path, rows: dict[tuple[str, str], tuple[float, float]]):
    """The project's tables with some (tool, subtask) rows' (seconds, graded quality) replaced."""
    for name in (SUBTASKS_FILE, TOOLS_FILE):
        shutil.copy(TABLES_DIR / name, tmp / name)
    reader = csv.DictReader(io.StringIO((TABLES_DIR / BENCHMARK_FILE).read_text(encoding="utf-8")))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=reader.fieldnames or [], lineterminator="\n")
    writer.writeheader()
    for row in reader:
        key = (row["tool"], row["subtask"])
        if key in rows:
            row["seconds"], row["quality"] = (str(v) for v in rows[key])
        writer.writerow(row)
    (tmp / BENCHMARK_FILE).write_text(out.getvalue(), encoding="utf-8")
    return load_tables(tmp)


def _upscaler(pred) -> str:
    return next(tool for sid, tool in pred[1] if tool in ("realesrgan", "lanczos_upscale"))


def test_alpha_zero_and_two_choose_different_upscalers(tmp_path: Path) -> None:
    tables = _tables_with(
        tmp_path,
        {("realesrgan", "image_upscaling"): (0.37, 0.95), ("lanczos_upscale", "image_upscaling"): (0.004, 0.85)},
    )
    services = Services(Settings(calibration_table=fake_table(), home=tmp_path / "home"), tables=tables)
    if not services.is_ready_fn()("realesrgan"):
        pytest.skip(f"realesrgan is not ready here: {services.why_not('realesrgan')}")
    ws = Workspace(services, Store(tmp_path / "store"))
    try:
        plan = plan_with_rules(INSTRUCTION)
        assert sorted(s.kind for s in plan.subtasks) == ["global_adjustment", "image_upscaling"]
        preds = ws.previews.predict(plan, UserRegion(), [0.0, 1.0, 2.0])
    finally:
        ws.close()
    by_alpha = {p[0]: p for p in preds}  # α → (α, ((subtask, tool), …), seconds, quality)
    assert _upscaler(by_alpha[0.0]) == "realesrgan"
    assert _upscaler(by_alpha[2.0]) == "lanczos_upscale"
    q0, q2 = by_alpha[0.0][3], by_alpha[2.0][3]
    s0, s2 = by_alpha[0.0][2], by_alpha[2.0][2]
    assert q0 > q2 and s0 > s2  # quality bought with seconds: a real trade-off


def test_a_table_without_a_trade_off_gives_one_choice(tmp_path: Path) -> None:
    """When one upscaler is both faster and better graded, every α picks it (nothing to trade)."""
    tables = _tables_with(
        tmp_path,
        {("realesrgan", "image_upscaling"): (0.37, 0.85), ("lanczos_upscale", "image_upscaling"): (0.004, 0.9)},
    )
    services = Services(Settings(calibration_table=fake_table(), home=tmp_path / "home"), tables=tables)
    ws = Workspace(services, Store(tmp_path / "store"))
    try:
        preds = ws.previews.predict(plan_with_rules(INSTRUCTION), UserRegion(), [0.0, 2.0])
    finally:
        ws.close()
    assert {_upscaler(p) for p in preds} == {"lanczos_upscale"}
