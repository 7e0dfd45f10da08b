"""FAKE for tests: a calibration table that vouches for the contexts costa's synthetic test scenes use.

The real table (`tool_tables/calibration.csv`, from the real-photo suite) vouches for almost nothing yet, so with it
nearly every turn of the synthetic test suite (drawn discs, signs, textures) would end *proposed*. Those tests are
about the search, the tools and the session, not about real-photo evidence, so the test suite runs with this FAKE
table instead, chosen by `tests/conftest.py` through the setting COSTA_CALIBRATION_TABLE. It claims
`FAKE_CASES` passed cases, all right, for every (subtask kind, tool) pair of the tool tables in every content, region
and pointing class — which is no evidence of anything, and says so in its header. Tests of the real ending set
COSTA_CALIBRATION_TABLE to the real table (`costa.calibration.CALIBRATION_FILE`). Never used outside tests.

`fake_table()` is this process's FAKE table (written once to a temporary folder, removed at exit): what conftest sets
COSTA_CALIBRATION_TABLE to, and what a test that builds `Settings(...)` directly passes as `calibration_table`.
`write_fake_calibration(dest, leave_out=...)` writes one; `leave_out` names contexts (or (kind, tool) pairs) it must
not vouch for, so a synthetic turn can end proposed in a test.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from costa.calibration import CONTENTS, POINTINGS, REGION_SIZES, CalibrationRow, StepContext, format_calibration
from costa.tables import Tables, load_tables

#: Passed cases the FAKE table claims per context (all right): far above MIN_CASES, so every listed context vouches.
FAKE_CASES = 1000
#: The FAKE table's MIN_CASES (the real table's floor).
FAKE_MIN_CASES = 20
FAKE_NOTE = "FAKE calibration for costa's synthetic test suite (costa/testing/calibration.py): NOT real-photo evidence"


def fake_calibration_rows(
    tables: Tables | None = None, leave_out: Iterable[StepContext | tuple[str, str]] = ()
) -> list[CalibrationRow]:
    """FAKE rows: every (kind, tool) of the tables × content × region × pointing, `FAKE_CASES` right of
    `FAKE_CASES`; none for a context in `leave_out` (a `StepContext`, or a (kind, tool) pair for all its contexts)."""
    tables = tables or load_tables()
    skip = set(leave_out)
    rows = []
    for spec in tables.tools.values():
        for kind in spec.subtasks:
            if (kind, spec.id) in skip:
                continue
            for content in CONTENTS:
                for region in REGION_SIZES:
                    for pointing in POINTINGS:
                        ctx = StepContext(kind, spec.id, content, region, pointing)
                        if ctx not in skip:
                            rows.append(CalibrationRow(ctx, FAKE_CASES, FAKE_CASES, "bench"))
    return rows


def write_fake_calibration(
    dest: Path, tables: Tables | None = None, leave_out: Iterable[StepContext | tuple[str, str]] = ()
) -> Path:
    """Write the FAKE calibration table to `dest` (a file path) and return it."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(format_calibration(FAKE_MIN_CASES, fake_calibration_rows(tables, leave_out), FAKE_NOTE))
    return dest


@functools.cache
def fake_table() -> Path:
    """This process's FAKE calibration table (every context of the tool tables vouched for), written once."""
    folder = Path(tempfile.mkdtemp(prefix="costa-FAKE-calibration-"))
    atexit.register(shutil.rmtree, folder, True)
    return write_fake_calibration(folder / "FAKE_calibration.csv")
