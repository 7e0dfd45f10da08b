"""Checks for the text subtasks: they read the result back with OCR and measure pixels, and they can fail.

Each check answers the question a user would ask of the result ("does it say OPEN now, and not SALE?", "is the phone
number unreadable?") with a quality in [0, 1] and short reasons. OCR comes from `CheckContext.reader` (the same engine
the tools use); crops around the edited area are read rather than the whole image, which is faster and keeps other
text out of the answer. Whether the rest of the image was left alone is checked separately (`unchanged_outside`).

Imports stay light (numpy only); the OCR engine is loaded by whoever builds the reader.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from costa.checks.context import CheckContext, CheckFn, TextReader
from costa.checks.exact import text_added
from costa.checks.fills import copied_into_fill, removal_artifacts, shading_kept
from costa.errors import ToolError
from costa.glyphs import edge_energy, locate_text
from costa.signstyle import sign_colours_kept
from costa.tables import KindSet
from costa.textmatch import (
    clean_target,
    find_matches,
    join_lines,
    match_score,
    normalise_text,
    semantic_kind,
    text_similarity,
)
from costa.types import Box, EditState, Subtask, TextRegion, ToolOutput, Verdict

#: Similarity at or above which OCR is taken to still read a piece of text.
READS_AS = 0.75
#: Crops shorter than this (pixels) are enlarged before OCR; the recogniser works at 48 px line height.
_MIN_CROP_HEIGHT = 64
#: Per-channel tolerance (0–255) for a redaction pixel to count as the box's colour.
_REDACTION_TOLERANCE = 12
#: Per-pixel increase of yellowness ((R+G)/2 − B, 0–255) that counts as highlighted.
_TINT_STEP = 15.0
#: Kinds whose target names text to look for in detected regions.
_TARGETED_KINDS = KindSet("target", "text")


# ------------------------------------------------------------------------------------------------------ the checks


#: A text fill at least this thick (px) is a whole box, not grown letter strokes: it must keep the grain around it.
TEXT_GRAIN_MIN_PX = 24.0


def check_text_replacement(
    ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput
) -> Verdict:
    """The edited area reads the new text (exactly, see `costa.checks.exact`; not counted when it was there before),
    neither it nor the old text's place still reads the old text, and the sign keeps its own colours."""
    new = subtask.result or ""
    old = clean_target(subtask.target)
    image = _result_image(after, output)
    area = _changed_box(before.image, image, output)
    if area is None:
        return Verdict(0.0, (f"image unchanged: {new!r} was not written",))
    if old is not None and semantic_kind(old) is None:
        # Read where the old text was too, so writing the new text elsewhere and leaving the old one fails.
        area = _union([area, *(box for _, box, _ in _locate(ctx, before, old))])
    # Little room to the sides: the new text lies inside the changed area, and a neighbouring word's first letter
    # read into the crop would glue onto it ("MENUV") and fail the exact match.
    margin, side = max(8, area.h // 2), max(4, area.h // 8)
    read = _read_text(ctx.reader, image, area, margin_x=side, margin_y=margin)
    if not read.strip():
        return Verdict(0.0, (f"OCR reads no text where {new!r} was written",))
    found = text_added(_read_text(ctx.reader, before.image, area, margin_x=side, margin_y=margin), read, new)
    quality = found.quality
    reasons = [f"OCR reads {read!r}: {found.reason}"]
    colours = sign_colours_kept(before.image, image, area)
    if colours is not None:
        quality = min(quality, colours[0])
        reasons.extend(colours[1])
    if old is not None and semantic_kind(old) is None:
        rest = normalise_text(read).replace(normalise_text(new), " ")
        if normalise_text(old) and match_score(rest, old) >= 0.8:
            quality = min(quality, 0.3)
            reasons.append(f"old text {old!r} is still readable")
    fit = _fits(ctx, before, image, old, new)
    return Verdict(_unit(min(quality, fit.quality)), (*reasons, *fit.reasons))


def _fits(ctx: CheckContext, before: EditState, image: np.ndarray, old: str | None, new: str) -> Verdict:
    """The new text keeps each old occurrence's size, weight and place and covers no other line
    (`costa.checks.textfit`); the worst occurrence counts."""
    from costa.checks.textfit import text_fit

    regions: Sequence[TextRegion] = tuple(before.artifacts.get("text_regions") or ()) or ctx.reader.read(before.image)
    verdicts = []
    for text, box, _ in _locate(ctx, before, old):
        others = [r.box for r in regions if _overlap(r.box, box) < 0.5]
        verdicts.append(text_fit(before.image, image, box, text, new, others))
    if not verdicts:
        return Verdict(1.0, ())
    return Verdict(min(v.quality for v in verdicts), tuple(r for v in verdicts for r in v.reasons))


def _overlap(a: Box, b: Box) -> float:
    """Intersection over the smaller box's area (0 when disjoint)."""
    w = min(a.x2, b.x2) - max(a.x, b.x)
    h = min(a.y2, b.y2) - max(a.y, b.y)
    return 0.0 if w <= 0 or h <= 0 else w * h / float(min(a.w * a.h, b.w * b.h))


def check_text_removal(
    ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput
) -> Verdict:
    """Nothing is readable where the removed text was, little of its edge energy is left, and the fill shows neither
    a smear nor a seam (`checks.fills.removal_artifacts`)."""
    image = _result_image(after, output)
    located = _locate(ctx, before, subtask.target)
    if not located:
        return Verdict(0.0, (f"cannot tell where {subtask.target or 'the text'!r} was: OCR finds it nowhere before",))
    if np.array_equal(before.image, image):
        return Verdict(0.0, ("image unchanged: the text is still there",))
    quality, reasons = 1.0, []
    for text, box, whole in located:
        read = _read_text(ctx.reader, image, box, margin_x=box.h // 4 if whole else 0, margin_y=box.h // 4)
        if read.strip() and match_score(read, text) >= READS_AS:
            quality = min(quality, 0.1)
            reasons.append(f"OCR still reads {text!r}")
        elif normalise_text(read) and normalise_text(
            _read_text(ctx.reader, image, box, box.h // 4 if whole else 0, box.h // 4, whole_lines=True)
        ):
            quality = min(quality, 0.5)
            reasons.append(f"OCR reads {read!r} where {text!r} was")
        left = _residual_edges(before.image, image, box)
        quality = min(quality, _unit(1.0 - left))
        if left > 0.2:
            reasons.append(f"{left:.0%} of the letters' edges of {text!r} remain")
    if not reasons:
        reasons.append(f"no text readable where {len(located)} removed occurrence(s) were")
    # A fill thicker than grown letter strokes (a painted-over box) must keep fine grain too.
    fill = removal_artifacts(image, output.edited_region, grain=True, grain_min_px=TEXT_GRAIN_MIN_PX)
    quality, reasons = min(quality, fill.quality), [*reasons, *fill.reasons]
    # A sign panel around text shades smoothly, so a plane through it predicts the fill: a flat patch there shows.
    shading = shading_kept(image, output.edited_region) if output.edited_region is not None else None
    if shading is not None:
        quality = min(quality, shading[0])
        reasons.append(shading[1])
    copied = copied_into_fill(image, output.edited_region)  # the fill's colours come from around it, not elsewhere
    if copied is not None:
        quality = min(quality, copied[0])
        reasons.append(copied[1])
    return Verdict(_unit(quality), tuple(reasons))


def check_text_redaction(
    ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput
) -> Verdict:
    """Each matched box is covered by one opaque colour (≥ 95 % of its pixels) and OCR cannot read the text there."""
    image = _result_image(after, output)
    located = _locate(ctx, before, subtask.target)
    if not located:
        return Verdict(0.0, (f"cannot tell where {subtask.target or 'the text'!r} was: OCR finds it nowhere before",))
    quality, reasons = 1.0, []
    for text, box, whole in located:
        inner = _shrink(box, 1)
        pixels = image[inner.y : inner.y2, inner.x : inner.x2].reshape(-1, 3).astype(np.int16)
        colour = np.median(pixels, axis=0)
        covered = float((np.abs(pixels - colour).max(axis=1) <= _REDACTION_TOLERANCE).mean())
        if covered < 0.95:
            quality = min(quality, 0.5 * covered)
            reasons.append(f"only {covered:.0%} of {text!r} is covered by an opaque box")
        read = _read_text(ctx.reader, image, box, margin_x=box.h // 4 if whole else 0, margin_y=box.h // 4)
        if read.strip() and match_score(read, text) >= READS_AS:
            quality = min(quality, 0.1)
            reasons.append(f"OCR still reads {text!r}")
    if not reasons:
        reasons.append(f"{len(located)} occurrence(s) covered and unreadable")
    return Verdict(_unit(quality), tuple(reasons))


def check_keyword_highlighting(
    ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput
) -> Verdict:
    """Each occurrence of the keyword is tinted toward yellow over most of its box, and OCR still reads it."""
    image = _result_image(after, output)
    located = _locate(ctx, before, subtask.target)
    if not located:
        return Verdict(0.0, (f"keyword {subtask.target!r} is not in the image",))
    quality, reasons = 1.0, []
    for text, box, whole in located:
        tinted = float((_yellowness(image, box) - _yellowness(before.image, box) >= _TINT_STEP).mean())
        if tinted < 0.9:
            quality = min(quality, _unit(0.7 * tinted))
            reasons.append(f"only {tinted:.0%} of {text!r} is tinted yellow")
        read = _read_text(ctx.reader, image, box, margin_x=box.h // 4 if whole else 0, margin_y=box.h // 4)
        legible = match_score(read, text)
        if legible < READS_AS:
            quality = min(quality, legible)
            reasons.append(f"highlighted {text!r} is no longer legible (OCR reads {read!r})")
    if not reasons:
        reasons.append(f"{len(located)} occurrence(s) of {subtask.target!r} highlighted and legible")
    return Verdict(_unit(quality), tuple(reasons))


def check_text_addition(
    ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput
) -> Verdict:
    """OCR reads the added text where the tool wrote it, exactly (see `costa.checks.exact`), and it was not readable
    there before the edit."""
    new = subtask.result or ""
    image = _result_image(after, output)
    area = _changed_box(before.image, image, output)
    if area is None:
        return Verdict(0.0, (f"image unchanged: {new!r} was not written",))
    # Little room to the sides: the new text lies inside the changed area, and a neighbouring word's first letter
    # read into the crop would glue onto it ("MENUV") and fail the exact match.
    margin, side = max(8, area.h // 2), max(4, area.h // 8)
    read = _read_text(ctx.reader, image, area, margin_x=side, margin_y=margin)
    if not read.strip():
        return Verdict(0.0, (f"OCR reads nothing where {new!r} was written",))
    found = text_added(_read_text(ctx.reader, before.image, area, margin_x=side, margin_y=margin), read, new)
    return Verdict(_unit(found.quality), (f"OCR reads {read!r}: {found.reason}",))


def check_text_regions(
    ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput
) -> Verdict:
    """Text regions were found (matching the target, for subtasks that name one); quality is their mean OCR score."""
    regions = tuple(output.artifacts.get("text_regions") or after.artifacts.get("text_regions") or ())
    if not regions:
        return Verdict(0.0, ("no text regions were found",))
    target = subtask.target if subtask.kind in _TARGETED_KINDS else None
    matched = _unique(m.region for m in find_matches(regions, target))
    if not matched:
        read = "; ".join(repr(r.text) for r in regions[:6])
        return Verdict(0.0, (f"no text matching {target!r}; OCR read {read}",))
    quality = float(np.mean([r.score for r in matched]))
    what = f"matching {clean_target(target)!r}" if clean_target(target) else "of text"
    return Verdict(_unit(quality), (f"{len(matched)} region(s) {what}, mean OCR score {quality:.2f}",))


def check_text_extraction(
    ctx: CheckContext, subtask: Subtask, before: EditState, after: EditState, output: ToolOutput
) -> Verdict:
    """Extracted text is non-empty and agrees with a fresh OCR read; quality is the lower of the mean OCR confidence
    of the lines it came from and that agreement."""
    text = output.artifacts.get("text")
    if not isinstance(text, str) or not text.strip():
        return Verdict(0.0, ("no text was extracted",))
    regions = ctx.reader.read(after.image)
    if clean_target(subtask.target) is not None:
        matches = find_matches(regions, subtask.target)
        if semantic_kind(subtask.target) is not None:
            regions = tuple(TextRegion(m.box, m.text, m.region.score) for m in matches)
        else:
            regions = _unique(m.region for m in matches)
    if not regions:
        return Verdict(0.3, (f"extracted {text!r}, but a fresh OCR read finds no such text",))
    confidence = float(np.mean([r.score for r in regions]))
    agreement = text_similarity(text, join_lines(regions))
    quality = min(confidence, agreement)
    return Verdict(
        _unit(quality),
        (f"extracted {len(text)} characters, OCR confidence {confidence:.2f}, agreement {agreement:.2f}",),
    )


TEXT_CHECKS: dict[str, CheckFn] = {
    "text_replacement": check_text_replacement,
    "text_removal": check_text_removal,
    "text_redaction": check_text_redaction,
    "keyword_highlighting": check_keyword_highlighting,
    "text_addition": check_text_addition,
    "text_detection": check_text_regions,
    "text_extraction": check_text_extraction,
}

TEXT_ARTIFACT_CHECKS: dict[str, CheckFn] = {"text_regions": check_text_regions}


# --------------------------------------------------------------------------------------------------------- helpers


def _unit(value: float) -> float:
    return float(min(1.0, max(0.0, value)))


def _result_image(after: EditState, output: ToolOutput) -> np.ndarray:
    return output.image if output.image is not None else after.image


def _unique(regions: object) -> tuple[TextRegion, ...]:
    out: list[TextRegion] = []
    for r in regions:  # type: ignore[attr-defined]
        if not any(r is seen for seen in out):
            out.append(r)
    return tuple(out)


def _changed_box(before: np.ndarray, after: np.ndarray, output: ToolOutput) -> Box | None:
    """The bounding box of what changed: the pixels that differ (None when none do), else the declared region."""
    if before.shape != after.shape:
        return Box(0, 0, after.shape[1], after.shape[0])
    changed = np.any(before != after, axis=-1)
    if not changed.any():
        return None
    region = output.edited_region
    mask = region & changed if region is not None and region.shape == changed.shape and region.any() else changed
    if not mask.any():
        mask = changed
    ys, xs = np.nonzero(mask)
    x1, y1 = int(xs.min()), int(ys.min())
    return Box(x1, y1, int(xs.max()) - x1 + 1, int(ys.max()) - y1 + 1)


def _locate(ctx: CheckContext, before: EditState, target: str | None) -> list[tuple[str, Box, bool]]:
    """(text, pixel box, whole line?) of each occurrence of `target` in the image before the edit, boxes computed as
    the tools compute them so checks measure exactly what was meant to change."""
    regions: Sequence[TextRegion] = tuple(before.artifacts.get("text_regions") or ()) or ctx.reader.read(before.image)
    try:
        located = locate_text(before.image, regions, target)
    except ToolError:
        return []
    return [(m.text, box, m.whole_region) for m, box in located]


def _read_text(
    reader: TextReader, image: np.ndarray, box: Box, margin_x: int, margin_y: int, whole_lines: bool = False
) -> str:
    """OCR the crop of `box` grown by the margins (pixels); small crops are enlarged first. Returns the lines read;
    with `whole_lines`, without those cut by the crop's top or bottom edge (the rim of a neighbouring line)."""
    height, width = image.shape[:2]
    x1, y1 = max(0, box.x - margin_x), max(0, box.y - margin_y)
    x2, y2 = min(width, box.x2 + margin_x), min(height, box.y2 + margin_y)
    crop = np.ascontiguousarray(image[y1:y2, x1:x2])
    if crop.shape[0] < _MIN_CROP_HEIGHT:
        from PIL import Image

        factor = min(3.0, _MIN_CROP_HEIGHT / crop.shape[0])
        size = (max(1, round(crop.shape[1] * factor)), max(1, round(crop.shape[0] * factor)))
        crop = np.asarray(Image.fromarray(crop).resize(size, Image.Resampling.BICUBIC), dtype=np.uint8)
    regions = reader.read(crop)
    if whole_lines:
        edge = max(2, crop.shape[0] // 20)
        regions = tuple(r for r in regions if r.box.y > edge and r.box.y2 < crop.shape[0] - edge)
    return join_lines(regions)


def _union(boxes: Sequence[Box]) -> Box:
    x1, y1 = min(b.x for b in boxes), min(b.y for b in boxes)
    return Box(x1, y1, max(b.x2 for b in boxes) - x1, max(b.y2 for b in boxes) - y1)


def _shrink(box: Box, pixels: int) -> Box:
    if box.w <= 2 * pixels or box.h <= 2 * pixels:
        return box
    return Box(box.x + pixels, box.y + pixels, box.w - 2 * pixels, box.h - 2 * pixels)


def _yellowness(image: np.ndarray, box: Box) -> np.ndarray:
    """Per-pixel (R + G) / 2 − B inside `box`: how far each pixel leans toward yellow (−255 … 255)."""
    crop = image[box.y : box.y2, box.x : box.x2].astype(np.float32)
    return (crop[..., 0] + crop[..., 1]) / 2 - crop[..., 2]


def _residual_edges(before: np.ndarray, after: np.ndarray, box: Box) -> float:
    """Fraction (0–1) of the text's edge energy left in `box`: edge energy above the background's, after over before.

    The background's energy is measured in bands just above and below the box (the sides may hold neighbouring
    words), so a textured background that was filled back in does not count as leftover text.
    """
    height = before.shape[0]
    band = max(3, box.h // 3)
    ring = [
        Box(box.x, y1, box.w, y2 - y1)
        for y1, y2 in ((max(0, box.y - band), box.y), (box.y2, min(height, box.y2 + band)))
        if y2 - y1 >= 2
    ]

    def excess(image: np.ndarray) -> float:
        inside = edge_energy(image, box)
        outside = float(np.mean([edge_energy(image, b) for b in ring])) if ring else 0.0
        return inside - outside

    text_edges = excess(before)
    if text_edges <= 1e-6:
        return 0.0
    return _unit(excess(after) / text_edges)
