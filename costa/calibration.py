"""Real-photo calibration: may costa vouch for a passed step in this context?

A step's check passing is evidence only as far as that check has been measured on real photos with known truth in
the same context: the subtask kind, the final tool, photo or flat graphic, the region's size and how the user pointed
(`StepContext`). `tool_tables/calibration.csv` holds, per context, how many real cases passed their checks and how
many of those were right against the truth (written by `python -m costa bench real --write` from the real-photo
suite's dev part alone; `--verdicts` adds a home's people's Accept / Discard verdicts and writes that home's own
table, `bench/real_tables.py`). `Calibration.vouch` says *verified* only where that
exact context has at least `MIN_CASES` passed real cases (a constant in the table's header comment) and their
precision (right among passed) is at least `MIN_PRECISION`; anywhere else it says why it cannot vouch, in one
sentence the user reads.

`parse_calibration` is pure (text in, `Calibration` out) and names the file, line and value of every problem, like
`costa.tables`; `load_calibration` reads the file. `content_class` and `region_class` compute two of the context's
fields from pixels.

Example:
    >>> text = ("# MIN_CASES=20\\n" + ",".join(CALIBRATION_COLUMNS) + "\\n"
    ...         "object_removal,remove_patchmatch,photo,small,box,41,41,1.0,bench\\n")
    >>> cal = parse_calibration(text, "calibration.csv")
    >>> v = cal.vouch(StepContext("object_removal", "remove_patchmatch", "photo", "small", "box"))
    >>> v.verified, v.cases, v.reason
    (True, 41, 'remove_patchmatch for object_removal on photos (small region, box): 41 real cases, 100 % right')
    >>> cal.vouch(StepContext("object_removal", "remove_telea", "photo", "small", "box")).verified
    False
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Literal, get_args

import numpy as np

from costa.errors import TableError

CALIBRATION_FILE = Path(__file__).resolve().parent.parent / "tool_tables" / "calibration.csv"
CALIBRATION_COLUMNS = ("kind", "tool", "content", "region", "pointing", "cases", "right", "precision", "source")
#: Least share of right results among a context's passed real cases for costa to call that context's passes verified.
MIN_PRECISION = 0.98

Content = Literal["photo", "graphic"]
RegionSize = Literal["none", "small", "medium", "large"]
Pointing = Literal["none", "click", "box", "brush", "memory"]
Source = Literal["bench", "person", "bench+person"]
CONTENTS: tuple[str, ...] = get_args(Content)
REGION_SIZES: tuple[str, ...] = get_args(RegionSize)
POINTINGS: tuple[str, ...] = get_args(Pointing)
SOURCES: tuple[str, ...] = get_args(Source)

#: Region size classes as a share of the image's pixels: below SMALL_SHARE is small, below MEDIUM_SHARE medium.
#: A removal of a cup on a table is ~1 %, a person in a street 3–10 %, a background or a foreground animal > 15 %.
SMALL_SHARE = 0.02
MEDIUM_SHARE = 0.15

_MIN_CASES_RE = re.compile(r"\bMIN_CASES\s*=\s*(\d+)\b")
_NAMES = {"content": CONTENTS, "region": REGION_SIZES, "pointing": POINTINGS}


@dataclass(frozen=True)
class StepContext:
    """What a passed check's evidence depends on.

    `kind` is the subtask kind ("object_removal"), `tool` the subtask's final tool id ("remove_patchmatch"),
    `content` "photo" or "graphic" (`content_class` of the image the step edited), `region` "none", "small",
    "medium" or "large" (`region_class` of the region the step consumed), `pointing` how the user pointed for this
    subtask: "none", "click", "box" or "brush" ("none" for a whole-image subtask such as a brightening or an
    extension, even when the same turn's other subtask was pointed at), or "memory" when no one pointed and the
    region is what an earlier turn changed ("now make it darker" after the cup was recoloured).
    """

    kind: str
    tool: str
    content: str
    region: str
    pointing: str

    def describe(self) -> str:
        """The context in words, for a vouch's reason ("remove_telea for object_removal on photos (small region,
        box)")."""
        content = (
            "photos" if self.content == "photo" else "flat graphics" if self.content == "graphic" else self.content
        )
        where = [] if self.region == "none" else [f"{self.region} region"]
        said = {"none": "no pointing", "memory": "the region an earlier turn changed"}
        where.append(said.get(self.pointing, self.pointing))
        return f"{self.tool} for {self.kind} on {content} ({', '.join(where)})"


@dataclass(frozen=True)
class Vouch:
    """Whether costa vouches for a passed step: `reason` is one plain sentence, the evidence or why there is none;
    `cases` the passed real cases in that context, `precision` the share right among them (None: no cases)."""

    verified: bool
    reason: str
    cases: int
    precision: float | None


@dataclass(frozen=True)
class CalibrationRow:
    """One context's evidence: `cases` passed real cases of which `right` were right against the truth.

    `source` says where the cases came from: the real-photo suite (`bench`), people's verdicts (`person`) or both.
    """

    context: StepContext
    cases: int
    right: int
    source: str

    @property
    def precision(self) -> float | None:
        return self.right / self.cases if self.cases else None


@dataclass(frozen=True)
class Calibration:
    """The parsed calibration table: evidence per exact context, and the case count a verdict needs."""

    min_cases: int
    rows: Mapping[StepContext, CalibrationRow]

    def vouch(self, ctx: StepContext) -> Vouch:
        """Verified only where this exact context has ≥ `min_cases` passed real cases, ≥ `MIN_PRECISION` right.

        Contexts are never pooled or borrowed from a neighbour: evidence for medium regions says nothing about small
        ones, box pointing nothing about one click."""
        row = self.rows.get(ctx)
        what = ctx.describe()
        if row is None or row.cases == 0:
            return Vouch(False, f"no real-photo evidence for {what}", 0, None)
        p = row.precision
        assert p is not None  # cases > 0
        evidence = f"{row.cases} real case{'s' if row.cases != 1 else ''}, {_percent(p)} right"
        if row.cases < self.min_cases:
            return Vouch(
                False, f"too little real-photo evidence for {what}: {evidence} (needs {self.min_cases})", row.cases, p
            )
        if p < MIN_PRECISION:
            return Vouch(
                False, f"{what} is not reliable on real photos: {evidence} (needs {_percent(MIN_PRECISION)})",
                row.cases, p,
            )  # fmt: skip
        return Vouch(True, f"{what}: {evidence}", row.cases, p)


def _percent(share: float) -> str:
    """0.975 → '97.5 %', 1.0 → '100 %' (never rounds a precision up to the bar)."""
    value = np.floor(share * 1000) / 10
    return f"{value:.0f} %" if value == int(value) else f"{value:.1f} %"


# ----------------------------------------------------------------------------------------------------- parsing


def parse_calibration(text: str, where: str = "calibration.csv") -> Calibration:
    """Parse the calibration table's text; raise `TableError` naming `where`, the line and the value.

    The header comment (lines starting with '#', before the column line) must say `MIN_CASES=N` (N ≥ 1).

    Raises:
        TableError: no MIN_CASES, a wrong header, an unknown class name, counts that are not whole numbers or where
            right > cases, a precision that disagrees with right / cases, an unknown source, a duplicate context.
    """
    lines = text.splitlines()
    comments = [ln for ln in lines if ln.startswith("#")]
    found = [m for ln in comments if (m := _MIN_CASES_RE.search(ln))]
    if not found:
        raise TableError(f"{where}: the header comment must say MIN_CASES=N (the passed real cases a context needs)")
    min_cases = int(found[0].group(1))
    if min_cases < 1:
        raise TableError(f"{where}: MIN_CASES must be at least 1, got {min_cases}")
    first = next((i for i, ln in enumerate(lines) if ln.strip() and not ln.startswith("#")), None)
    if first is None:
        raise TableError(f"{where}: no column line; expected {','.join(CALIBRATION_COLUMNS)}")
    if any(ln.startswith("#") for ln in lines[first:]):
        raise TableError(f"{where}: comments belong before the column line")
    reader = csv.DictReader(io.StringIO("\n".join(lines[first:])))
    if tuple(reader.fieldnames or ()) != CALIBRATION_COLUMNS:
        raise TableError(f"{where}: header must be {','.join(CALIBRATION_COLUMNS)}, got {reader.fieldnames}")
    rows: dict[StepContext, CalibrationRow] = {}
    for offset, raw in enumerate(reader, start=2):
        at = f"{where} line {first + offset}"
        row = _parse_row(raw, at)
        if row.context in rows:
            raise TableError(f"{at}: duplicate context {row.context}")
        rows[row.context] = row
    return Calibration(min_cases, MappingProxyType(rows))


def _parse_row(raw: Mapping[str, str | None], at: str) -> CalibrationRow:
    values = {k: (raw.get(k) or "").strip() for k in CALIBRATION_COLUMNS}
    for key in ("kind", "tool"):
        if not re.fullmatch(r"[a-z0-9_]+", values[key]):
            raise TableError(f"{at}: {key} must be a snake_case id, got {values[key]!r}")
    for key, allowed in _NAMES.items():
        if values[key] not in allowed:
            raise TableError(f"{at}: {key} must be one of {', '.join(allowed)}, got {values[key]!r}")
    try:
        cases, right = int(values["cases"]), int(values["right"])
    except ValueError as e:
        raise TableError(
            f"{at}: cases and right must be whole numbers, got {values['cases']!r}, {values['right']!r}"
        ) from e
    if cases < 0 or not 0 <= right <= cases:
        raise TableError(f"{at}: need 0 <= right <= cases, got right={right}, cases={cases}")
    try:
        precision = float(values["precision"]) if values["precision"] else None
    except ValueError as e:
        raise TableError(f"{at}: precision must be a number or empty, got {values['precision']!r}") from e
    expected = right / cases if cases else None
    if (precision is None) != (expected is None) or (
        precision is not None and expected is not None and abs(precision - expected) > 5e-4
    ):
        want = "empty" if expected is None else f"{expected:.4f}"
        raise TableError(f"{at}: precision {values['precision']!r} disagrees with right / cases = {want}")
    if values["source"] not in SOURCES:
        raise TableError(f"{at}: source must be one of {', '.join(SOURCES)}, got {values['source']!r}")
    ctx = StepContext(values["kind"], values["tool"], values["content"], values["region"], values["pointing"])
    return CalibrationRow(ctx, cases, right, values["source"])


def format_calibration(min_cases: int, rows: list[CalibrationRow], note: str = "") -> str:
    """The table's text for `rows` (sorted by context), with the MIN_CASES header comment and an optional note line.

    >>> row = CalibrationRow(StepContext("outpainting", "outpaint_mirror", "photo", "none", "none"), 3, 1, "bench")
    >>> print(format_calibration(20, [row]).splitlines()[-1])
    outpainting,outpaint_mirror,photo,none,none,3,1,0.3333,bench
    """
    out = [
        f"# MIN_CASES={min_cases}: a context is verified only with at least this many passed real cases, "
        f"{MIN_PRECISION:.0%} of them right (costa/calibration.py).",
        "# Written by `python -m costa bench real --write` from the real-photo suite's dev part (with --verdicts: and"
        " a home's people's verdicts); do not edit by hand.",
    ]
    if note:
        out.append(f"# {note}")
    out.append(",".join(CALIBRATION_COLUMNS))
    key = lambda r: (r.context.kind, r.context.tool, r.context.content, r.context.region, r.context.pointing)  # noqa: E731
    for r in sorted(rows, key=key):
        c = r.context
        p = "" if r.precision is None else f"{r.precision:.4f}"
        out.append(",".join((c.kind, c.tool, c.content, c.region, c.pointing, str(r.cases), str(r.right), p, r.source)))
    return "\n".join(out) + "\n"


def load_calibration(path: Path | None = None) -> Calibration:
    """Read and parse the calibration table (default `tool_tables/calibration.csv`).

    Raises:
        TableError: the file is missing or malformed (the message names it).
    """
    p = Path(path) if path is not None else CALIBRATION_FILE
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise TableError(f"{p}: cannot read the calibration table: {e}") from e
    return parse_calibration(text, p.name)


# ------------------------------------------------------------------------------------------------ pixel classes

#: content_class works on a thumbnail at most this many pixels on its long side (resolution-independent features).
_THUMB_SIDE = 256
_BLOCK = 8
#: A block is textured when its luminance, after a 3×3 median and removing a fitted plane, varies by ≥ this (levels).
_TEXTURE_STD = 3.0
#: Graphic when fewer than LOW of the blocks are textured, or fewer than HIGH and the 8 commonest colours (16 levels
#: per channel, after a 5×5 median) cover at least DOMINANT of the pixels. Fixed on 62 EditEval / MagicBrush photos
#: and 14 scikit-image images against 58 of costa's drawn scenes, signs and assets (see tests/test_calibration.py).
_TEXTURED_LOW = 0.2
_TEXTURED_HIGH = 0.45
_DOMINANT = 0.8


def content_class(image: np.ndarray) -> str:
    """ "photo" or "graphic" (a flat drawing: plain panels, text, shaded shapes on smooth backgrounds).

    Two features on a ≤ 256-px thumbnail: the share of 8×8 blocks with texture left after removing each block's
    plane (photos have texture nearly everywhere; graphics are flat but for their edges), and how much of the image
    its 8 commonest colours cover (graphics are a few colours). A real photo that is mostly a plain backdrop may come
    out "graphic"; that only means its evidence is counted with the graphics'.

    Args:
        image: (H, W, 3) or (H, W) uint8.

    >>> flat = np.zeros((120, 160, 3), np.uint8); flat[:, 80:] = (200, 30, 30)
    >>> content_class(flat)
    'graphic'
    >>> content_class(np.random.default_rng(0).integers(0, 256, (120, 160, 3), dtype=np.uint8))
    'photo'
    """
    import cv2

    if image.ndim == 2:
        image = np.stack([image] * 3, axis=-1)
    if image.ndim != 3 or image.shape[2] < 3 or image.dtype != np.uint8:
        raise ValueError(f"content_class needs an (H, W, 3) uint8 image, got shape {image.shape} dtype {image.dtype}")
    rgb = np.ascontiguousarray(image[..., :3])
    h, w = rgb.shape[:2]
    scale = min(1.0, _THUMB_SIDE / max(h, w))
    if scale < 1.0:
        rgb = cv2.resize(rgb, (max(1, round(w * scale)), max(1, round(h * scale))), interpolation=cv2.INTER_AREA)
    textured = _textured_share(cv2.medianBlur(rgb, 3))
    if textured < _TEXTURED_LOW:
        return "graphic"
    if textured < _TEXTURED_HIGH and _dominant_share(cv2.medianBlur(rgb, 5)) >= _DOMINANT:
        return "graphic"
    return "photo"


def _textured_share(rgb: np.ndarray) -> float:
    luma = rgb.astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)
    b = _BLOCK
    h, w = luma.shape[0] // b * b, luma.shape[1] // b * b
    if h == 0 or w == 0:
        return 1.0  # too small to tell: treat as a photo (the class with real evidence behind it)
    blocks = luma[:h, :w].reshape(h // b, b, w // b, b).transpose(0, 2, 1, 3).reshape(-1, b * b)
    yy, xx = np.mgrid[0:b, 0:b]
    design = np.stack([np.ones(b * b), yy.ravel(), xx.ravel()], axis=1)
    residual = blocks - blocks @ (design @ np.linalg.pinv(design)).T
    return float((residual.std(axis=1) >= _TEXTURE_STD).mean())


def _dominant_share(rgb: np.ndarray) -> float:
    q = (rgb.astype(np.int32) // 16).reshape(-1, 3)
    counts = np.bincount(q[:, 0] * 256 + q[:, 1] * 16 + q[:, 2], minlength=4096)
    return float(np.sort(counts)[::-1][:8].sum() / max(1, q.shape[0]))


def region_class(mask: np.ndarray | None, shape: tuple[int, int]) -> str:
    """ "none", "small", "medium" or "large": the region's share of an image of `shape` (height, width).

    None or an empty mask is "none" (a whole-image step); below `SMALL_SHARE` (2 %) small, below `MEDIUM_SHARE`
    (15 %) medium, else large.

    >>> m = np.zeros((100, 100), bool); m[:20, :20] = True
    >>> region_class(None, (100, 100)), region_class(m, (100, 100)), region_class(~m, (100, 100))
    ('none', 'medium', 'large')
    """
    h, w = int(shape[0]), int(shape[1])
    if h <= 0 or w <= 0:
        raise ValueError(f"region_class needs a positive (height, width), got {shape}")
    if mask is None:
        return "none"
    if mask.shape[:2] != (h, w):
        raise ValueError(f"region_class: the mask is {mask.shape[:2]} but the image is {(h, w)}")
    share = float(np.count_nonzero(mask)) / (h * w)
    if share == 0.0:
        return "none"
    if share < SMALL_SHARE:
        return "small"
    return "medium" if share < MEDIUM_SHARE else "large"
