"""Ground truth for the synthetic tasks (`costa.synthetic.tasks`): did a subtask do what its clause asked?

`verify_subtask` checks one subtask's outcome against the scene's truth (the table in `costa.synthetic.tasks`'s
docstring), never by the tools' own checks; `Frame` follows the truth's coordinates through outpainting (offset) and
upscaling (scale); `match_plan` pairs planned subtasks with the clauses they serve.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from costa.synthetic.tasks import Expected, SyntheticTask
from costa.types import Box, Plan, TextRegion


@dataclass
class Frame:
    """Where the scene's ground truth sits in the current image: p_current = p_scene × scale + (dx, dy)."""

    scale: float = 1.0
    dx: float = 0.0
    dy: float = 0.0
    pixels_changed: bool = False  # some earlier subtask changed pixels (then true-background PSNR is not measured)

    def box(self, b: Box) -> Box:
        return Box(
            round(b.x * self.scale + self.dx),
            round(b.y * self.scale + self.dy),
            max(1, round(b.w * self.scale)),
            max(1, round(b.h * self.scale)),
        )

    @property
    def identity(self) -> bool:
        return self.scale == 1.0 and self.dx == 0.0 and self.dy == 0.0


@dataclass(frozen=True)
class SubtaskVerdict:
    """One expected subtask's outcome: passed against ground truth, and why."""

    kind: str
    clause: str
    passed: bool
    reason: str


def _overlap(a: Box, b: Box) -> float:
    """Share of the smaller box that the two boxes share."""
    w = min(a.x2, b.x2) - max(a.x, b.x)
    h = min(a.y2, b.y2) - max(a.y, b.y)
    return 0.0 if w <= 0 or h <= 0 else w * h / float(min(a.w * a.h, b.w * b.h))


def _read_tiles(reader: Any, image: np.ndarray) -> list[TextRegion]:
    """OCR of `image` in 2×2 overlapping tiles, each read at twice its size (regions in tile coordinates: only their
    text is used). The ground truth's second look, where the added word is at no known place."""
    import cv2

    h, w = image.shape[:2]
    out: list[TextRegion] = []
    for y0 in (0, h // 3):
        for x0 in (0, w // 3):
            tile = np.ascontiguousarray(image[y0 : y0 + 2 * h // 3, x0 : x0 + 2 * w // 3])
            out.extend(reader.read(cv2.resize(tile, None, fx=2.0, fy=2.0, interpolation=cv2.INTER_CUBIC)))
    return out


def _reads(regions: Sequence[TextRegion], word: str) -> list[TextRegion]:
    """Regions in which OCR read `word` (as the text tools match it: case-insensitive, tolerant)."""
    from costa.textmatch import find_matches

    return [m.region for m in find_matches(regions, f"'{word}'")]


#: Subtask kinds whose outcome is judged by reading the image's text again.
_TEXT_EDITS = ("text_replacement", "text_removal", "text_addition", "keyword_highlighting", "text_redaction")


def verify_subtask(
    task: SyntheticTask,
    e: Expected,
    before: np.ndarray,
    after: np.ndarray | None,
    result: str,
    frame: Frame,
    words: list[str],
    reader: Any,
) -> tuple[bool, str]:
    """Check one subtask's outcome against the task's ground truth (see the table in the module docstring)."""
    if e.kind in ("text_extraction", "text_detection"):
        found = [w for w in words if w.lower() in result.lower()]
        share = len(found) / max(1, len(words))
        return share >= 0.8, f"result names {len(found)}/{len(words)} words: {result[:80]!r}"
    if after is None:
        return False, "the subtask produced no image"
    if e.kind in _TEXT_EDITS:
        return _verify_text_edit(task, e, before, after, frame, reader)
    verify = _VERIFIERS.get(e.kind)
    if verify is None:
        return False, f"no ground truth for {e.kind!r}"
    return verify(task, e, before, after, frame)


def _verify_text_edit(
    task: SyntheticTask, e: Expected, before: np.ndarray, after: np.ndarray, frame: Frame, reader: Any
) -> tuple[bool, str]:
    from costa.imagestats import lab_stats, psnr

    regions = reader.read(after)
    read = [r.text for r in regions]
    if e.kind == "text_redaction":
        from costa.textmatch import find_matches

        left = find_matches(regions, e.span)
        return not left, f"OCR reads {[m.text for m in left]} of kind {e.span!r}" if left else "no such text left"
    if e.kind == "text_addition":
        if not _reads(regions, e.new or ""):  # one read of a whole busy photo misses small words: read in tiles
            regions = [*regions, *_read_tiles(reader, after)]
            read = [r.text for r in regions]
        return bool(_reads(regions, e.new or "")), f"OCR reads {read}"
    assert task.text is not None and e.word is not None
    gt = frame.box(next(w.box for w in task.text.words if w.text == e.word))
    if e.kind == "text_replacement":
        new_here = [r for r in _reads(regions, e.new or "") if _overlap(r.box, gt) >= 0.3]
        old = _reads(regions, e.word)
        ok = bool(new_here) and not old
        return ok, f"new word over the old place: {bool(new_here)}; old word still read: {bool(old)}; OCR {read}"
    if e.kind == "text_removal":
        old = _reads(regions, e.word)
        if old:
            return False, f"OCR still reads {e.word!r}: {read}"
        if frame.identity and not frame.pixels_changed:
            ink = task.text.ink & Box(gt.x - 2, gt.y - 2, gt.w + 4, gt.h + 4).to_mask(*after.shape[:2])
            if ink.any():
                value = psnr(after[ink][None], task.text.background[ink][None])
                return value >= 20.0, f"erased ink vs true background PSNR {value:.1f} dB (≥20)"
        return True, "OCR no longer reads it"
    here = [r for r in _reads(regions, e.word) if _overlap(r.box, gt) >= 0.3]
    if not here:
        return False, f"OCR no longer reads {e.word!r} at its place: {read}"
    mask = gt.clip(after.shape[1], after.shape[0]).to_mask(*after.shape[:2])
    moved = lab_stats(after, mask).b - lab_stats(before, mask).b
    return moved >= 4.0, f"word still read; mean b* over it {moved:+.1f} (≥4)"


def _verify_recolour(
    task: SyntheticTask, e: Expected, before: np.ndarray, after: np.ndarray, frame: Frame
) -> tuple[bool, str]:
    from costa.checks.common import ciede2000_values
    from costa.colours import parse_colour
    from costa.masks import erode_mask

    assert task.obj is not None
    rgb = parse_colour(e.colour or "")
    if rgb is None or not frame.identity:
        return False, f"cannot verify colour {e.colour!r} here"
    mask = erode_mask(task.obj.mask, 2)
    median = float(np.median(ciede2000_values(after, mask, rgb)))
    return median <= 15.0, f"median ΔE2000 to {e.colour} {median:.1f} (≤15)"


def _verify_removal(
    task: SyntheticTask, e: Expected, before: np.ndarray, after: np.ndarray, frame: Frame
) -> tuple[bool, str]:
    from costa.imagestats import psnr
    from costa.masks import dilate_mask

    assert task.obj is not None
    if not frame.identity:
        return False, "cannot verify the removal after a geometry change"
    region = dilate_mask(task.obj.mask, 2)
    value = psnr(after[region][None], task.obj.background[region][None])
    if value >= 20.0:
        return True, f"removed region vs true background PSNR {value:.1f} dB (≥20)"
    # A photo's hidden content cannot be known from its surroundings: there, being much closer to it than the
    # object was is what a good fill can do.
    was = psnr(before[region][None], task.obj.background[region][None])
    ok = task.obj.background_kind == "photo" and value >= was + 5.0
    return ok, f"removed region vs true background PSNR {value:.1f} dB (≥20, or +5 over {was:.1f} on photos)"


def _verify_adjustment(
    task: SyntheticTask, e: Expected, before: np.ndarray, after: np.ndarray, frame: Frame
) -> tuple[bool, str]:
    from costa.imagestats import lab_stats

    if after.shape != before.shape:
        return False, "the size changed"
    sb, sa = lab_stats(before), lab_stats(after)
    r = e.result or ""
    checks = {
        "brighter": (sa.lightness - sb.lightness >= 1.5, f"L* {sb.lightness:.1f} → {sa.lightness:.1f}"),
        "darker": (sb.lightness - sa.lightness >= 1.5, f"L* {sb.lightness:.1f} → {sa.lightness:.1f}"),
        "more contrast": (sa.contrast >= 1.05 * sb.contrast, f"L* spread {sb.contrast:.1f} → {sa.contrast:.1f}"),
        "less contrast": (sb.contrast >= 1.05 * sa.contrast, f"L* spread {sb.contrast:.1f} → {sa.contrast:.1f}"),
        "more saturated": (sa.chroma >= 1.05 * sb.chroma, f"chroma {sb.chroma:.1f} → {sa.chroma:.1f}"),
        "less saturated": (sb.chroma >= 1.05 * sa.chroma, f"chroma {sb.chroma:.1f} → {sa.chroma:.1f}"),
        "warmer": (sa.b - sb.b >= 1.5, f"b* {sb.b:.1f} → {sa.b:.1f}"),
        "cooler": (sb.b - sa.b >= 1.5, f"b* {sb.b:.1f} → {sa.b:.1f}"),
        "grayscale": (sa.chroma <= 3.0, f"chroma {sa.chroma:.1f} (≤3)"),
        "sepia": (sa.b >= 5.0, f"b* {sa.b:.1f} (≥5)"),
    }
    ok, why = checks.get(r, (False, f"unknown adjustment {r!r}"))
    return ok, why


def _verify_upscaling(
    task: SyntheticTask, e: Expected, before: np.ndarray, after: np.ndarray, frame: Frame
) -> tuple[bool, str]:
    import cv2

    from costa.imagestats import psnr

    factor = float(e.result or 2)
    want = (round(before.shape[0] * factor), round(before.shape[1] * factor))
    if after.shape[:2] != want:
        return False, f"size {after.shape[1]}x{after.shape[0]}, expected {want[1]}x{want[0]}"
    back = cv2.resize(after, (before.shape[1], before.shape[0]), interpolation=cv2.INTER_AREA)
    value = psnr(back, before)
    return value >= 28.0, f"×{factor:g}; shrunk back vs before PSNR {value:.1f} dB (≥28)"


def _verify_deblurring(
    task: SyntheticTask, e: Expected, before: np.ndarray, after: np.ndarray, frame: Frame
) -> tuple[bool, str]:
    from costa.imagestats import psnr

    if task.sharp is None or not frame.identity or after.shape != task.sharp.shape:
        return False, "no sharp truth to compare with here"
    gain = psnr(after, task.sharp) - psnr(before, task.sharp)
    return gain >= 0.3, f"PSNR to the sharp scene {gain:+.2f} dB (≥0.3)"


def _verify_outpainting(
    task: SyntheticTask, e: Expected, before: np.ndarray, after: np.ndarray, frame: Frame
) -> tuple[bool, str]:
    from costa.errors import ToolError
    from costa.tools.outpaint import outpaint_margins

    try:
        m = outpaint_margins(before.shape[0], before.shape[1], e.result, e.params)
    except ToolError as err:
        return False, str(err)
    want = m.new_size(before.shape[0], before.shape[1])
    if after.shape[:2] != want:
        return False, f"canvas {after.shape[1]}x{after.shape[0]}, expected {want[1]}x{want[0]}"
    inner = after[m.top : m.top + before.shape[0], m.left : m.left + before.shape[1]]
    same = bool(np.array_equal(inner, before))
    return same, "original kept at its offset" if same else "the original moved or changed"


_Verifier = Callable[[SyntheticTask, Expected, np.ndarray, np.ndarray, Frame], tuple[bool, str]]
#: Subtask kind → how its outcome is judged against the truth (the text edits: `_verify_text_edit`).
_VERIFIERS: dict[str, _Verifier] = {
    "object_recoloration": _verify_recolour,
    "object_removal": _verify_removal,
    "global_adjustment": _verify_adjustment,
    "image_upscaling": _verify_upscaling,
    "image_deblurring": _verify_deblurring,
    "outpainting": _verify_outpainting,
}


def advance(frame: Frame, kind: str, before: np.ndarray, after: np.ndarray, e: Expected | None) -> None:
    """Move the ground-truth frame through a subtask that changed the geometry or the pixels."""
    if kind == "outpainting" and e is not None:
        from costa.tools.outpaint import outpaint_margins

        m = outpaint_margins(before.shape[0], before.shape[1], e.result, e.params)
        frame.dx += m.left
        frame.dy += m.top
    elif kind == "image_upscaling":
        f = after.shape[1] / before.shape[1]
        frame.scale *= f
        frame.dx *= f
        frame.dy *= f
    if kind != "image_deblurring":
        frame.pixels_changed = True


def words_after(words: list[str], e: Expected) -> list[str]:
    if e.kind == "text_replacement":
        return [(e.new or "") if w == e.word else w for w in words]
    if e.kind == "text_removal":
        return [w for w in words if w != e.word]
    if e.kind == "text_addition":
        return [*words, e.new or ""]
    return words


def match_plan(plan: Plan, expected: Sequence[Expected]) -> dict[str, Expected]:
    """Planned subtask id → the expected clause it serves (same kind, same word or result), in order."""
    free = list(expected)
    out: dict[str, Expected] = {}
    for s in plan.subtasks:
        for e in free:
            if e.kind != s.kind:
                continue
            same_word = e.word is None or (s.target or "").strip("'\" ").lower() == e.word.lower()
            same_new = e.new is None or (s.result or "").strip("'\" ").lower() == e.new.lower()
            same_result = e.kind != "global_adjustment" or s.result == e.result
            if same_word and same_new and same_result:
                out[s.id] = e
                free.remove(e)
                break
    return out
