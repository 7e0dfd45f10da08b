"""The records one turn is made of: what the user pointed at, how the turn runs, the search's state, each subtask's
final step and result, and the short public summary of a subtask's result.

Pure records and small functions over them; nothing here runs a tool.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from costa.errors import InputError
from costa.targets import Verification
from costa.types import Box, EditState, Mask, Point, Subtask, ToolOutput, ToolSpec

#: Search modes a turn may run (key → label), the one list the CLI, the API, the page and the core check against.
MODES: dict[str, str] = {
    "lazy": "CoSTA* lazy A* (default)",
    "eager": "CoSTA* eager A* (the published search, for comparison)",
    "fast-slow": "FaSTA* fast–slow (learned subroutines first, local A* on failure)",
}


#: The ranges of a turn's numbers: α (cost/quality trade-off) and the step check's quality threshold.
ALPHA_RANGE = (0.0, 2.0)
THRESHOLD_RANGE = (0.0, 1.0)


def checked_number(value: Any, name: str, lo: float, hi: float) -> float:
    """`value` as a float in [lo, hi], or an `InputError` naming it and echoing the value (the one check every
    interface's α and threshold go through: the CLI, the page, the API, the preview, `run_turn`).

    >>> checked_number("0.5", "alpha", 0, 2)
    0.5
    """
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError) as e:
        raise InputError(f"{name} must be a number in [{lo:g}, {hi:g}], got {value!r}") from e
    if isinstance(value, bool) or not math.isfinite(x) or not lo <= x <= hi:
        raise InputError(f"{name} must be a number in [{lo:g}, {hi:g}], got {value!r}")
    return x


def check_alpha_value(alpha: Any) -> float:
    return checked_number(alpha, "alpha", *ALPHA_RANGE)


def turn_numbers(settings: Any, alpha: Any = None, threshold: Any = None) -> tuple[float, float]:
    """α and the threshold a turn runs with: the given ones, else the settings' defaults (COSTA_ALPHA,
    COSTA_THRESHOLD), both checked."""
    a = settings.alpha if alpha is None else alpha
    t = settings.threshold if threshold is None else threshold
    return check_alpha_value(a), checked_number(t, "threshold", *THRESHOLD_RANGE)


def _target_key(target: str) -> str:
    """A target as compared between a reference's parts and a plan's subtasks: lower case, no leading article."""
    words = target.lower().split()
    return " ".join(words[1:] if words[:1] in (["the"], ["a"], ["an"]) else words)


#: Labels `costa.pointing` gives the regions and boxes it makes from clicks (a brush's and a typed box's differ).
CLICK_LABELS = ("user click", "user clicks")
#: The label of a mask the session took from its memory (the pixels an earlier turn changed), not from pointing.
REMEMBERED_LABEL = "remembered region"


@dataclass(frozen=True)
class UserRegion:
    """What the user pointed at: boxes, brush masks, clicks. Becomes artifacts every subtask may start from.

    `parts` are the remembered regions of several things one reference named ("make them darker" after an edit of
    the yellow disc and the green square): (target as a subtask names it, its mask); a subtask whose target is one
    of them starts from that part alone (`for_target`), so no thing is edited once per subtask.
    """

    boxes: tuple[Box, ...] = ()
    masks: tuple[Mask, ...] = ()
    points: tuple[Point, ...] = ()
    parts: tuple[tuple[str, Mask], ...] = ()

    def for_target(self, target: str) -> UserRegion:
        """What a subtask with this target starts from: its own part when one of `parts` is it, else everything.

        >>> m = np.zeros((2, 2), bool); m[0, 0] = True
        >>> r = UserRegion(masks=(Mask(m | m.T),), parts=(("yellow disc", Mask(m)), ("green square", Mask(m.T))))
        >>> int(r.for_target("the Yellow disc").masks[0].data.sum()), r.for_target("discs") is r
        (1, True)
        """
        key = _target_key(target)
        found = [mask for name, mask in self.parts if _target_key(name) == key]
        return UserRegion(masks=(found[0],)) if len(found) == 1 else self

    def artifacts(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.boxes:
            out["boxes"] = self.boxes
        if self.masks:
            out["masks"] = self.masks
        if self.points:
            out["points"] = self.points
        return out

    def pointing(self) -> str:
        """How the user pointed, for the calibration's context: "brush", "box", "click" or "none" (the strongest
        given: a brush says exactly where, a box bounds it, clicks only mark it); "memory" when the region is only
        what an earlier turn changed (a reference such as "make it darker", no pointing this turn)."""
        if self.masks and all(m.label == REMEMBERED_LABEL for m in self.masks) and not (self.boxes or self.points):
            return "memory"
        if any(m.label not in (*CLICK_LABELS, REMEMBERED_LABEL) for m in self.masks):
            return "brush"
        if any(b.label not in (*CLICK_LABELS, "user brush") for b in self.boxes):
            return "box"
        if self.points or self.masks or self.boxes:
            return "click"
        return "none"

    def validate(self, width: int, height: int) -> None:
        for b in self.boxes:
            if b.x < 0 or b.y < 0 or b.x2 > width or b.y2 > height:
                raise InputError(f"box {b.x},{b.y},{b.w},{b.h} is outside the {width}x{height} image")
        for m in self.masks:
            if m.data.shape != (height, width):
                raise InputError(f"mask is {m.data.shape[1]}x{m.data.shape[0]} but the image is {width}x{height}")
            if not m.data.any():
                raise InputError("the mask is empty: mark the region to edit")
        for p in self.points:
            if not (0 <= p.x < width and 0 <= p.y < height):
                raise InputError(f"point {p.x},{p.y} is outside the {width}x{height} image")


@dataclass(frozen=True)
class TurnConfig:
    """How a turn runs. None takes the settings' default (α, threshold, reflection).

    alpha: cost/quality trade-off in [0, 2]; threshold: quality each step's check must reach, in [0, 1]; mode: a key
    of `MODES`; reflect: judge each finished subtask with the reflection experts and retry on their feedback;
    accept_unverified: report a subtask whose target was found but not verified (or whose result costa cannot vouch
    for) as done — the user accepted the candidate — instead of stopping there.
    """

    alpha: float | None = None
    threshold: float | None = None
    mode: str = "lazy"
    reflect: bool | None = None
    accept_unverified: bool = False

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise InputError(f"mode must be one of {', '.join(sorted(MODES))}, got {self.mode!r}")


@dataclass(frozen=True, eq=False)
class FinalStep:
    """A subtask's last step on a path: what reflection judges (the state before and after it, the tool's output)."""

    subtask_id: str
    tools: tuple[str, ...]
    before: EditState
    after: EditState
    output: ToolOutput
    produced: tuple[str, ...]


#: (subtask id, what its grounder verified, the candidate region it found as a bool (H, W) mask or None)
VerificationEntry = tuple[str, Verification, np.ndarray | None]


@dataclass(frozen=True, eq=False)
class TurnState:
    """The search's opaque state: the edit state plus per-subtask results gathered along this path."""

    edit: EditState
    results: tuple[tuple[str, str], ...] = ()
    images: tuple[tuple[str, np.ndarray], ...] = ()  # (subtask id, image after it) for subtasks that edit the image
    finals: tuple[FinalStep, ...] = ()  # each subtask's final step along this path, in order
    verifications: tuple[VerificationEntry, ...] = ()  # what each subtask's grounder verified along this path

    def carried(self) -> TurnState:
        """This state as the start of the next subtask: the image and every result so far, no tool artifacts (but
        the pixels invented so far this turn, contract 3)."""
        from costa.constraints import carried

        edit = EditState(self.edit.image, carried(self.edit))
        return TurnState(edit, self.results, self.images, self.finals, self.verifications)


def subtask_start(edit: EditState, region: UserRegion) -> EditState:
    """The state a subtask's first step starts from: the current image and what the user pointed at, not the
    artifacts earlier subtasks' tools left (their boxes are not this target's); what the user pointed at is also
    kept as `pointed` for every step and check, and the pixels invented so far as `invented` (costa.constraints)."""
    from costa.constraints import carried

    return EditState(edit.image, {**region.artifacts(), **carried(edit, region)})


@dataclass(frozen=True, eq=False)
class SubtaskResult:
    """What one subtask came to in a search phase: its tool chain, checked quality (product of its steps), its final
    step, its one-line result, and the image after it when it edits the image."""

    subtask_id: str
    kind: str
    tools: tuple[str, ...]
    quality: float
    final: FinalStep
    result: str
    image: np.ndarray | None


@dataclass
class PhaseResult:
    """What a search phase (whole-plan A*, or fast–slow per subtask) hands the shared ending.

    `done` lists the subtasks it served, in execution order; `failed` the ones it could not (subtask id → why);
    `state` is the last state (the image after every served subtask, with their results and verifications), None
    when nothing was served. `executions` and `spent_seconds` count real tool runs (memo hits are free). `reason`
    says why nothing was served; `stopped` that the user's Stop ended the phase.
    """

    done: list[SubtaskResult] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    state: TurnState | None = None
    executions: int = 0
    spent_seconds: float = 0.0
    reason: str = ""
    stopped: bool = False


def step_params(spec: ToolSpec, subtask: Subtask, attempt: int) -> dict[str, Any]:
    """Parameters a tool runs with on `attempt` (0 = first try): its retry schedule, overridden by the plan's params."""
    params = spec.params_for_attempt(attempt)
    params.update({k: v for k, v in subtask.params.items() if k in params})
    return params


def summarise(produces: str, after: EditState, output: Any) -> str:
    """A subtask's result in one line: the text, label or caption it read, the regions or boxes it found, the masks'
    size, or the tool's note on what it edited."""
    value = after.artifacts.get(produces)
    if produces in ("text", "label", "caption") and isinstance(value, str):
        return value
    if produces == "text_regions" and value is not None:
        return "; ".join(f"{r.text!r} at {r.box.x},{r.box.y},{r.box.w},{r.box.h}" for r in value)
    if produces == "boxes" and value is not None:
        return "; ".join(f"{b.label or 'object'} at {b.x},{b.y},{b.w},{b.h}" for b in value)
    if produces == "masks" and value is not None:
        return f"{len(value)} mask(s), {sum(m.area for m in value)} px"
    return output.notes or "edited"
