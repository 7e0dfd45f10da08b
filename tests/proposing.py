"""A session core whose turns end *proposed* (issue 18 part 2), shared by the proposal tests (tests/test_proposed.py,
tests/test_verdicts.py, tests/test_page_restore.py).

Its FAKE calibration table (costa/testing/calibration.py) leaves out the two recolouring contexts, so the drawn disc's
recolouring is a proposal in every search mode; everything else is real (the tools, the checks, the store).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from costa.config import Settings
from costa.services import Services
from costa.session import Pointing, SessionCore, TurnOptions
from costa.store import Store
from costa.testing.calibration import write_fake_calibration

#: The box around the drawn disc, "x,y,w,h".
BOX = "26,14,44,44"


def disc() -> np.ndarray:
    """A red disc (radius 18) on grey, 96×72."""
    img = np.full((72, 96, 3), 120, np.uint8)
    yy, xx = np.mgrid[:72, :96]
    img[(yy - 36) ** 2 + (xx - 48) ** 2 < 18**2] = (200, 30, 30)
    return img


def proposing_core(tmp_path: Path) -> tuple[SessionCore, str]:
    """A session core whose FAKE table cannot vouch for recolouring, and a session with the disc uploaded."""
    table = write_fake_calibration(
        tmp_path / "FAKE_no_recolour.csv",
        leave_out=[("object_recoloration", "recolor_lab"), ("object_recoloration", "recolor_hsv")],
    )
    core = SessionCore(Services(Settings(home=tmp_path / "home", calibration_table=table)), Store(tmp_path / "s"))
    src = tmp_path / "disc.png"
    Image.fromarray(disc()).save(src)
    sid = core.new_session(None).id
    core.upload(sid, None, src)
    return core, sid


def edit(core: SessionCore, sid: str, text: str, mode: str = "lazy", **pointing: Any) -> Any:
    """Run one turn without reflection (`pointing`: clicks, box, brush, and `action`, e.g. "refine"); its last
    `TurnView`."""
    opts = TurnOptions.validate(core.settings, None, None, mode, False, str(pointing.pop("action", "")))
    req = core.prepare(sid, None, text, opts, Pointing(**pointing))
    return [v for v, _ in core.run(req)][-1]


def propose(core: SessionCore, sid: str, text: str = "make the object blue") -> Any:
    """Recolour the disc in its box: a turn that ends proposed; its last `TurnView`."""
    return edit(core, sid, text, box=BOX)
