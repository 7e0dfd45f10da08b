"""What one turn is asked to do, validated before anything is stored, and how it is planned.

A request is applied whole or not at all: `TurnOptions.validate` (the one place α, the threshold, the mode and the
reflection switch are checked and defaulted, through `costa.turn.records`), `check_instruction` (the planner's own
limits), `parse_clicks`, `read_brush` and `costa.session.core.SessionCore.prepare` check every input (box, clicks,
brush, the upload) before the first write, so a rejected `/edit` leaves the session exactly as it was. Planning
(`plan_turn`) gives the planner the image's OCR text and the session's earlier instructions, for every interface
alike. `Vocabulary` is how views name subtask kinds.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from costa.config import Settings
from costa.errors import InputError
from costa.events import Event
from costa.pointing import brush_mask
from costa.services import Services
from costa.session.view import TurnView
from costa.turn.records import MODES, TurnConfig, UserRegion, turn_numbers
from costa.types import Mask, Plan

log = logging.getLogger(__name__)

#: Most clicks one request may carry (the page keeps the last ones; the API refuses more).
MAX_CLICKS = 8
#: Earlier instructions given to the planner as context.
HISTORY_TURNS = 8
#: A clicked region smaller than this (pixels) is probably a highlight or an edge, not the object: the user is warned.
MIN_CLICK_REGION_PX = 64


@dataclass(frozen=True)
class Vocabulary:
    """How views name what a turn does: each subtask kind's name, the kinds that only read the image, and those
    whose answers are checked for form only (from tool_tables/subtasks.yaml)."""

    names: Mapping[str, str]
    reads: frozenset[str]
    unreferenced: frozenset[str]

    @classmethod
    def from_tables(cls, tables: Any) -> Vocabulary:
        kinds = tables.subtasks
        reads = frozenset(k for k, v in kinds.items() if not v.edits_image)
        return cls(
            {k: v.name for k, v in kinds.items()}, reads, frozenset(k for k, v in kinds.items() if v.unreferenced)
        )

    def view(self, instruction: str, threshold: float = 0.8, **fields: Any) -> TurnView:
        """A new view of a turn on `instruction` (the other `TurnView` fields as keywords)."""
        return TurnView(instruction, self.names, threshold, reads=self.reads, unreferenced=self.unreferenced, **fields)


@dataclass(frozen=True)
class TurnOptions:
    """How a turn runs: α (0 best quality … 2 fastest), quality threshold per step (0–1), search mode, hooks.

    `reflect` switches multi-expert reflection (`costa.reflect`) on or off for the turn (None: the settings'
    COSTA_REFLECT); `accept_unverified` reports a target that was found but not verified as done (the CLI's
    `--accept-unverified`); `action` is the follow-up on an unverified target that made this turn (e.g.
    "edit_region", "point", "rest"), recorded with the turn.
    """

    alpha: float = 1.0
    threshold: float = 0.8
    mode: str = "lazy"
    reflect: bool | None = None
    action: str = ""
    accept_unverified: bool = False

    @classmethod
    def validate(
        cls,
        settings: Settings,
        alpha: Any = None,
        threshold: Any = None,
        mode: str | None = None,
        reflect: bool | None = None,
        action: str = "",
        accept_unverified: bool = False,
    ) -> TurnOptions:
        """Checked options; None takes the settings' default.

        Raises:
            InputError: α outside [0, 2], threshold outside [0, 1], infinite or not a number, unknown mode.
        """
        a, t = turn_numbers(settings, alpha, threshold)
        m = mode or "lazy"
        if m not in MODES:
            raise InputError(f"mode must be one of {', '.join(sorted(MODES))}, got {m!r}")
        r = None if reflect is None else bool(reflect)
        return cls(a, t, m, r, action or "", bool(accept_unverified))

    def config(self) -> TurnConfig:
        """The turn's `costa.turn.records.TurnConfig` (what `run_turn` reads)."""
        return TurnConfig(self.alpha, self.threshold, self.mode, self.reflect, self.accept_unverified)


def check_instruction(text: Any) -> str:
    """The instruction stripped, or an InputError saying what to type (the planner's own limits: one constant)."""
    from costa.planner import check_instruction as problem_with

    problem = problem_with(text if isinstance(text, str) else ("" if text is None else text))
    if problem is not None:
        raise InputError(problem)
    return str(text).strip()


def parse_clicks(text: str | None) -> list[tuple[int, int]]:
    """ "x,y;x,y" → [(x, y), …] in image pixels, at most `MAX_CLICKS`.

    >>> parse_clicks("10,20; 30,40")
    [(10, 20), (30, 40)]
    """
    if not text or not str(text).strip():
        return []
    out = []
    for part in str(text).split(";"):
        if not part.strip():
            continue
        try:
            x, y = (float(v) for v in part.split(","))
            if not (math.isfinite(x) and math.isfinite(y)):
                raise ValueError("not finite")
        except ValueError as e:
            raise InputError(f'clicks must look like "x,y;x,y" in pixels, got {part.strip()[:40]!r}') from e
        out.append((round(x), round(y)))
        if len(out) > MAX_CLICKS:
            raise InputError(f"at most {MAX_CLICKS} clicks per edit; for a larger area send a box or a brush mask")
    return out


def read_brush(path: str | Path, width: int, height: int) -> Mask:
    """A brush mask from an image file of the image's size: white (or, with transparency, opaque) = region.

    The size is checked from the file's header before its pixels are decoded.

    Raises:
        InputError: not a readable image, another size than the width x height image, or nothing marked.
    """
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as img:
            if img.size != (width, height):
                raise InputError(
                    f"the brush mask is {img.width}x{img.height} but the current image is {width}x{height}: "
                    "send a mask of the same size (white = region)"
                )
            transparent = img.mode in ("RGBA", "LA", "PA") or "transparency" in img.info
            data = np.asarray(img.convert("RGBA" if transparent else "RGB"))
    except InputError:
        raise
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as e:
        raise InputError("the brush mask is not an image costa can read: send a PNG, white = region") from e
    return brush_mask(data, width, height)


def region_warnings(region: UserRegion) -> list[str]:
    """What the user should know about a region before the turn runs (a click that selected only a sliver)."""
    out = []
    for m in region.masks:
        if m.label == "user click" and m.area < MIN_CLICK_REGION_PX:
            out.append(
                f"The click selected only {m.area} px (a highlight or an edge?): click nearer the middle of the "
                "object, click two opposite corners, or paint it with the brush."
            )
    return out


@dataclass(frozen=True)
class PlanResult:
    """A plan (None when nothing can run) and the planner's events (LLM calls, fallbacks, questions, errors)."""

    plan: Plan | None
    events: tuple[Event, ...]


def plan_turn(
    services: Services, client: Any, instruction: str, image: np.ndarray | None, history: Sequence[str] = ()
) -> Generator[Event, None, PlanResult]:
    """Plan with `costa.planner.plan_instruction`, giving it the image's OCR text (when an LLM plans) and the
    session's earlier instructions; yield the planner's events and return a `PlanResult`."""
    from costa.planner import plan_instruction

    ocr_text: tuple[str, ...] = ()
    if client is not None and image is not None:
        try:
            ocr_text = tuple(r.text for r in services.reader.read(image))
        except Exception as e:  # OCR context is a hint for the LLM; its failure must not stop planning
            log.warning("OCR for planner context failed: %s", e)
    events: list[Event] = []
    gen = plan_instruction(
        services.settings,
        instruction,
        image,
        services.tables,
        ocr_text=ocr_text,
        history=tuple(history)[-HISTORY_TURNS:],
        client=client,
    )
    while True:
        try:
            ev = next(gen)
        except StopIteration as stop:
            plan = stop.value
            break
        events.append(ev)
        yield ev
    return PlanResult(plan if plan is not None and plan.subtasks else None, tuple(events))


def llm_client(services: Services) -> Any:
    """The configured LLM client for planning, or None (offline rule planner)."""
    try:
        from costa.planner import llm_client_for
    except ImportError:
        return None
    return llm_client_for(services.settings)
