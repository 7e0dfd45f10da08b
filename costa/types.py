"""Records shared by the engine: artifacts, edit state, plans and tool specs.

Everything here is a frozen dataclass or a pydantic model so that fields are never encoded into strings and parsed back.
Images are RGB `uint8` numpy arrays of shape (H, W, 3); masks are `bool` arrays of shape (H, W); boxes are pixel
coordinates (x, y, w, h) with (x, y) the top-left corner.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from costa.errors import InputError

if TYPE_CHECKING:
    from costa.targets import Verification

#: Artifact types a tool may consume or produce. Each has one Python representation (see `EditState`).
ARTIFACT_TYPES: tuple[str, ...] = (
    "image",  # np.ndarray uint8 (H, W, 3)
    "boxes",  # tuple[Box, ...]
    "masks",  # tuple[Mask, ...]
    "points",  # tuple[Point, ...] (user clicks)
    "text_regions",  # tuple[TextRegion, ...]
    "text",  # str
    "label",  # str
    "caption",  # str
    "depth",  # np.ndarray float32 (H, W), larger = farther, normalised to [0, 1]
    "invented",  # np.ndarray bool (H, W): every pixel a generative step of this turn produced (costa.invented)
    "pointed",  # costa.agent.UserRegion: what the user pointed at, seen by every step (costa.constraints)
    "kept",  # np.ndarray bool (H, W): what the instruction said to keep as it is ("keep the trees unchanged")
)
#: Artifacts the turn keeps for every step (not a tool's declared output): pixels invented so far, the user's
#: pointing, the region the instruction keeps unchanged.
TURN_ARTIFACTS: frozenset[str] = frozenset({"invented", "pointed", "kept"})


@dataclass(frozen=True)
class Box:
    """An axis-aligned box in pixels; `score` is the detector's confidence in [0, 1]."""

    x: int
    y: int
    w: int
    h: int
    label: str = ""
    score: float = 1.0
    verification: Verification | None = None  # what the grounder that found it verified (costa.targets)

    def __post_init__(self) -> None:
        if self.w <= 0 or self.h <= 0:
            raise InputError(f"box width and height must be positive, got w={self.w} h={self.h}")

    @property
    def x2(self) -> int:
        return self.x + self.w

    @property
    def y2(self) -> int:
        return self.y + self.h

    def clip(self, width: int, height: int) -> Box:
        """Return the part of the box inside a width × height image; raise `InputError` if none is."""
        x1, y1 = max(0, self.x), max(0, self.y)
        x2, y2 = min(width, self.x2), min(height, self.y2)
        if x2 <= x1 or y2 <= y1:
            raise InputError(f"box {self.x},{self.y},{self.w},{self.h} lies outside the {width}x{height} image")
        return replace(self, x=x1, y=y1, w=x2 - x1, h=y2 - y1)

    def to_mask(self, height: int, width: int) -> np.ndarray:
        mask = np.zeros((height, width), dtype=bool)
        b = self.clip(width, height)
        mask[b.y : b.y2, b.x : b.x2] = True
        return mask


@dataclass(frozen=True)
class Point:
    """A user click in pixels; `positive` False marks background."""

    x: int
    y: int
    positive: bool = True


@dataclass(frozen=True, eq=False)
class Mask:
    """A boolean (H, W) mask of one object."""

    data: np.ndarray
    label: str = ""
    score: float = 1.0
    verification: Verification | None = None  # what the grounder that found it verified (costa.targets)

    def __post_init__(self) -> None:
        if self.data.ndim != 2 or self.data.dtype != bool:
            raise InputError(f"a mask must be a 2-D bool array, got shape {self.data.shape} dtype {self.data.dtype}")

    @property
    def area(self) -> int:
        return int(self.data.sum())

    def bbox(self) -> Box | None:
        ys, xs = np.nonzero(self.data)
        if len(xs) == 0:
            return None
        x1, y1 = int(xs.min()), int(ys.min())
        return Box(x1, y1, int(xs.max()) - x1 + 1, int(ys.max()) - y1 + 1, self.label, self.score, self.verification)


@dataclass(frozen=True)
class TextRegion:
    """One detected text line: its box, its polygon (4 corner points, clockwise) and what OCR read there."""

    box: Box
    text: str
    score: float
    polygon: tuple[tuple[float, float], ...] = ()


@dataclass(frozen=True, eq=False)
class EditState:
    """The image being edited and the typed artifacts tools have produced for the current subtask.

    States are immutable: a tool returns a `ToolOutput` and `with_output` makes a new state, so the search can keep
    several branches alive at once.
    """

    image: np.ndarray
    artifacts: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        img = self.image
        if not isinstance(img, np.ndarray) or img.ndim != 3 or img.shape[2] != 3 or img.dtype != np.uint8:
            shape = getattr(img, "shape", None)
            raise InputError(f"an edit state needs an RGB uint8 (H, W, 3) image, got shape {shape}")
        unknown = set(self.artifacts) - set(ARTIFACT_TYPES)
        if unknown:
            raise InputError(f"unknown artifact types {sorted(unknown)}; known: {ARTIFACT_TYPES}")
        object.__setattr__(self, "artifacts", MappingProxyType(dict(self.artifacts)))

    @property
    def height(self) -> int:
        return int(self.image.shape[0])

    @property
    def width(self) -> int:
        return int(self.image.shape[1])

    def available(self) -> frozenset[str]:
        """Artifact types present, always including "image"."""
        return frozenset(self.artifacts) | {"image"}

    def with_output(self, output: ToolOutput) -> EditState:
        merged = dict(self.artifacts)
        merged.update(output.artifacts)
        return EditState(output.image if output.image is not None else self.image, merged)

    def with_artifacts(self, **artifacts: Any) -> EditState:
        merged = dict(self.artifacts)
        merged.update(artifacts)
        return EditState(self.image, merged)


@dataclass(frozen=True, eq=False)
class ToolOutput:
    """What one tool call produced.

    `image` is the new image (None when the tool only reads). `artifacts` maps artifact type → value. `edited_region`
    is the bool (H, W) mask of pixels the tool meant to change, so checks can verify everything else is unchanged.
    """

    image: np.ndarray | None = None
    artifacts: Mapping[str, Any] = field(default_factory=dict)
    edited_region: np.ndarray | None = None
    notes: str = ""


@dataclass(frozen=True, eq=False)
class ToolCall:
    """One call of a tool: the state it works on, its subtask and the attempt's parameters (a batch of calls is a
    list of these, `costa.tools.base.Tool.call_batch`)."""

    state: EditState
    subtask: Subtask
    params: Mapping[str, Any]


@dataclass(frozen=True)
class Verdict:
    """A check's judgement of one step: `quality` in [0, 1] and human-readable reasons."""

    quality: float
    reasons: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not 0.0 <= self.quality <= 1.0:
            raise ValueError(f"verdict quality must be in [0, 1], got {self.quality}")

    def passed(self, threshold: float) -> bool:
        return self.quality >= threshold


# ---------------------------------------------------------------------------------------------------------- plans


class Subtask(BaseModel):
    """One atomic edit or query with one target.

    `kind` is a subtask id from tool_tables/subtasks.yaml; `target` names what it acts on (an object noun or the text to
    find); `result` is what it should become (a colour, new text, a replacement object); `parents` are ids of subtasks
    that must run first.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    kind: str = Field(min_length=1)
    target: str | None = None
    result: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    parents: tuple[str, ...] = ()

    def describe(self) -> str:
        parts = [self.kind]
        if self.target:
            parts.append(f"target={self.target!r}")
        if self.result:
            parts.append(f"result={self.result!r}")
        return " ".join(parts)


class Unsupported(BaseModel):
    """Part of an instruction that no subtask kind covers, and why."""

    model_config = ConfigDict(frozen=True)

    text: str
    reason: str


class Plan(BaseModel):
    """A validated plan: subtasks whose `parents` form a DAG.

    `form` "chain" runs them in list order (FaSTA*); "tree" lets the search try other orders that respect `parents`
    (CoSTA*'s alternative orderings).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    instruction: str = ""
    subtasks: tuple[Subtask, ...]
    form: Literal["chain", "tree"] = "chain"
    unsupported: tuple[Unsupported, ...] = ()
    planner: str = "rules"

    @field_validator("subtasks")
    @classmethod
    def _check_dag(cls, subtasks: tuple[Subtask, ...]) -> tuple[Subtask, ...]:
        seen: set[str] = set()
        for s in subtasks:
            if s.id in seen:
                raise ValueError(f"duplicate subtask id {s.id!r}")
            missing = [p for p in s.parents if p not in seen]
            if missing:
                raise ValueError(f"subtask {s.id!r} has parents {missing} that are not listed before it")
            seen.add(s.id)
        return subtasks

    def by_id(self, subtask_id: str) -> Subtask:
        for s in self.subtasks:
            if s.id == subtask_id:
                return s
        raise KeyError(subtask_id)

    def with_form(self, form: Literal["chain", "tree"]) -> Plan:
        """The same subtasks as a chain (run in list order, FaSTA*) or a tree (any order `parents` allow, CoSTA*)."""
        if form not in ("chain", "tree"):
            raise InputError(f"a plan's form is 'chain' or 'tree', got {form!r}")
        return self.model_copy(update={"form": form})

    def to_json(self, indent: int | None = None) -> str:
        """The plan as JSON, kinds as table ids; `Plan.from_json` reads it back unchanged."""
        return self.model_dump_json(indent=indent)

    @classmethod
    def from_json(cls, text: str | bytes) -> Plan:
        """Read a plan written by `to_json` or by `python -m costa plan --json`.

        The CLI adds a display-only `name` to each subtask (the kind's name in the tables); it is dropped here since
        `kind` determines it.

        Raises:
            InputError: the text is not JSON or not a valid plan; the message says which field is wrong.
        """
        import json

        from pydantic import ValidationError

        try:
            data = json.loads(text)
        except ValueError as e:
            raise InputError(f"the plan is not valid JSON: {e}") from e
        if isinstance(data, dict) and isinstance(data.get("subtasks"), list):
            data["subtasks"] = [
                {k: v for k, v in s.items() if k != "name"} if isinstance(s, dict) else s for s in data["subtasks"]
            ]
        try:
            return cls.model_validate(data)
        except ValidationError as e:
            raise InputError(f"not a valid plan: {e}") from e


# ----------------------------------------------------------------------------------------------------- tool specs


Backend = Literal["embedded", "neural", "api"]
Status = Literal["ready", "planned"]


@dataclass(frozen=True)
class ParamSpec:
    """One tool parameter: its default and what it becomes on each retry (`retries[i]` for attempt i + 1)."""

    name: str
    default: Any
    retries: tuple[Any, ...] = ()
    doc: str = ""
    #: "float", "int", "str" or "bool"; None only for a planned tool's parameter (no class reads it yet).
    type: str | None = None
    #: Inclusive bounds of a number (None = unbounded on that side), in the parameter's own unit.
    min: float | None = None
    max: float | None = None
    #: The only values allowed, when the parameter is one of a fixed set.
    choices: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Requirements:
    python: tuple[str, ...] = ()
    weights: tuple[str, ...] = ()
    apt: tuple[str, ...] = ()
    gpu: bool = False


@dataclass(frozen=True)
class ToolSpec:
    """What a tool is, from tool_tables/tools.yaml (behaviour lives in the tool's class)."""

    id: str
    family: str
    backend: Backend
    status: Status
    subtasks: tuple[str, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    params: tuple[ParamSpec, ...] = ()
    requirements: Requirements = Requirements()
    licence: str = ""
    description: str = ""
    #: The implementing class as "package.module:Class" (imported on demand); None for a planned tool.
    impl: str | None = None
    #: Why a planned tool is not implemented (the table's `planned_reason`; `costa doctor` shows it); "" when ready.
    planned_reason: str = ""
    #: An image-wide editor that, when the subtask names a target, acts only inside the target's region found in the
    #: state (the user's box or brush, a remembered region, or — when `masks` is one of its inputs — a grounder's
    #: masks): it cannot locate a target by itself (the table's `in_region`; see `costa.turn.graphs`).
    in_region: bool = False

    @property
    def max_attempts(self) -> int:
        """1 + the longest retry schedule among the parameters."""
        return 1 + max((len(p.retries) for p in self.params), default=0)

    def params_for_attempt(self, attempt: int) -> dict[str, Any]:
        """Parameters for attempt 0 (defaults), 1, 2… — each retry uses its scheduled value, else the last one."""
        if attempt < 0 or attempt >= self.max_attempts:
            raise ValueError(f"tool {self.id!r} has attempts 0..{self.max_attempts - 1}, asked for {attempt}")
        out: dict[str, Any] = {}
        for p in self.params:
            if attempt == 0 or not p.retries:
                out[p.name] = p.default
            else:
                out[p.name] = p.retries[min(attempt, len(p.retries)) - 1]
        return out


@dataclass(frozen=True)
class SubtaskSpec:
    """A subtask kind from tool_tables/subtasks.yaml, with its category columns (the only place they are defined)."""

    id: str
    name: str
    produces: str
    edits_image: bool
    description: str
    #: What the subtask's target names: an object noun, text in the image, or nothing (whole-image kinds).
    target: Literal["object", "text", "none"] = "none"
    #: The result names an object that exists only after it runs (replacement, addition).
    creates: bool = False
    #: It changes the text in the image (chained in the order written).
    edits_text: bool = False
    #: It reads the image's text, so it runs after every text edit.
    reads_text: bool = False
    #: It runs before everything else (it changes the canvas later edits work on).
    runs_first: bool = False
    #: Two different results for one target contradict each other.
    exclusive: bool = False
    #: It changes the whole picture by design (a full-frame change is expected, not a leak).
    whole_image: bool = False
    #: It changes the image size.
    resizes: bool = False
    #: Its answer has no reference to check it against offline (a caption, a depth map): its check judges the form
    #: only, and the chat, the CLI and the API say the answer itself is not verified.
    unreferenced: bool = False
    #: It paints pixels the photo never had (an outpainted margin, a removal's fill, a generated object): analysis
    #: later in the turn does not treat them as the photo's own (costa.invented).
    invents: bool = False


@dataclass(frozen=True)
class BenchmarkRow:
    """Expected seconds and graded quality of a tool on a subtask, and how often its check passed.

    `quality` is the mean graded quality in [0, 1] (how well the tool did what was asked); `source` says where it came
    from: "truth" (graded against synthetic ground truth, `costa.synthetic.grades`), "check" (the mean check quality,
    where the scenes have no truth), "real" (graded against hand-made truth on real photos, `bench masks`; never
    replaced by synthetic measurements), "paper" (a published figure) or "estimate". `pass_rate` is the share of
    measured cases whose check reached the search's threshold (for "real" rows: whose IoU reached
    `bench.masks.PASS_IOU`; None for paper and estimate rows); measured rows have `n` > 0.
    """

    tool: str
    subtask: str
    seconds: float
    quality: float
    source: Literal["truth", "check", "real", "paper", "estimate"]
    n: int = 0
    pass_rate: float | None = None

    @property
    def measured(self) -> bool:
        return self.source in ("truth", "check", "real")
