"""Text edits drawn with Pillow: replace a word, add a caption, redact, highlight.

Every tool here works from the `text_regions` artifact (what OCR found) except `PillowTextWriter`, and finds its
target with `costa.textmatch` ("SALE", "the phone number", None for all text). Styles are measured on the image itself:
background from a ring around the box, text colour from the glyph cores, font size from the old glyphs' ink height.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from costa.errors import InputError, ToolError
from costa.glyphs import (
    Background,
    boxes_mask,
    contrasting_colour,
    expand_box,
    ink_colour,
    locate_text,
)
from costa.masks import dilate_mask
from costa.signstyle import bare_panel_run, measure_sign, panel_colour
from costa.textmatch import TextMatch
from costa.tools.base import Tool
from costa.tools.params import float_param, int_param
from costa.types import Box, EditState, Subtask, TextRegion, ToolOutput

_FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
_REGULAR, _BOLD = "DejaVuSans.ttf", "DejaVuSans-Bold.ttf"
_MIN_FONT_PX = 6
#: Width a replacement word inside a line may take, as a multiple of the old word's ink width.
_WORD_ROOM = 1.1


def load_font(size: int, bold: bool = False) -> Any:
    """Return a TrueType font `size` pixels tall: DejaVu Sans (bold or regular) when installed, else Pillow's built-in
    scalable font (no bold), so text writing never needs a font file."""
    from PIL import ImageFont

    path = _FONT_DIR / (_BOLD if bold else _REGULAR)
    if path.exists():
        return ImageFont.truetype(str(path), max(1, size))
    return ImageFont.load_default(size=max(1, size))


def parse_colour(value: Any) -> tuple[int, int, int]:
    """Turn an RGB list/tuple (0–255) or a colour name / "#rrggbb" into an RGB tuple; raise `InputError` otherwise."""
    from PIL import ImageColor

    if isinstance(value, str):
        try:
            rgb = ImageColor.getrgb(value.strip())
        except ValueError as e:
            raise InputError(f"unknown colour {value!r}; use a name like 'red', '#ff0000' or [255, 0, 0]") from e
        return (int(rgb[0]), int(rgb[1]), int(rgb[2]))
    if isinstance(value, Sequence) and len(value) in (3, 4) and all(isinstance(v, int | float) for v in value):
        r, g, b = (round(float(v)) for v in value[:3])
        if all(0 <= v <= 255 for v in (r, g, b)):
            return (r, g, b)
    raise InputError(f"a colour must be a name or three numbers 0–255, got {value!r}")


# ---------------------------------------------------------------------------------------------------- replacement


@dataclass(frozen=True)
class TextStyle:
    """How the old text looked, measured on the image: where its ink sits, its size, weight and colour.

    `origin` is the Pillow "ls" anchor (left end of the baseline) in image pixels; `size` is the font size in pixels;
    `outline`/`outline_px` and `shadow`/`shadow_offset` (dx, dy pixels) describe an outline and a drop shadow when
    the old text had them (see `costa.signstyle`).
    """

    origin: tuple[float, float]
    size: int
    bold: bool
    colour: tuple[int, int, int]
    ink: Box
    centred: bool
    outline: tuple[int, int, int] | None = None
    outline_px: int = 0
    shadow: tuple[int, int, int] | None = None
    shadow_offset: tuple[int, int] = (0, 0)


@dataclass(frozen=True)
class _Planned:
    match: TextMatch
    box: Box
    background: Background
    mask: np.ndarray  # bool (box.h, box.w): the old glyphs, with their outline and shadow
    style: TextStyle
    outside: np.ndarray  # bool (box.h, box.w): pixels of the box beyond the sign's panel (never painted over)
    panel_span: tuple[int, int] = (0, 0)  # image columns [x1, x2) of bare panel along the line, the box included


def measure_style(
    image: np.ndarray, text: str, box: Box, mask: np.ndarray, background: Background, centred: bool = False
) -> TextStyle:
    """Measure the old text's style so new text can be drawn to look the same.

    Args:
        text: what the old text says (to calibrate the font size on it).
        box: its pixel box; `mask` (box.h, box.w) marks its glyph pixels; `background` is the fit around it.
        centred: whether new text should be centred on the old ink rather than start where it started.

    The font size is found by rendering the *old* string and matching its letters' height to the measured one: the
    median height of the tall glyphs, so a tilted line (its ink box taller than any letter: "STOP!" on a sign at 4°
    measured 96 px of ink for 70-px letters) and descenders do not inflate it. Bold versus regular is the face whose
    stroke width (relative to the font size) and rendered width are closer to the measured ones.
    """
    ys, xs = np.nonzero(mask)
    ink = Box(box.x + int(xs.min()), box.y + int(ys.min()), int(xs.max() - xs.min()) + 1, int(ys.max() - ys.min()) + 1)
    measured_h, measured_stroke = glyph_stats(mask)
    best: tuple[float, int, bool] | None = None
    for bold in (False, True):
        ref = load_font(100, bold)
        rendered = _rendered(ref, text)
        if rendered is None:
            continue
        ref_h, ref_stroke = glyph_stats(rendered)
        if ref_h <= 0:
            continue
        size = max(_MIN_FONT_PX, round(100 * measured_h / ref_h))
        font = load_font(size, bold)
        left, _, right, _ = font.getbbox(text, anchor="ls")
        error = abs((right - left) - ink.w) / max(ink.w, 1) + abs(
            measured_stroke / max(measured_h, 1.0) - ref_stroke / ref_h
        ) / max(ref_stroke / ref_h, 1e-3)
        if best is None or error < best[0]:
            best = (error, size, bold)
    if best is None:
        raise ToolError(f"cannot measure the font of {text!r}: it renders empty")
    _, size, bold = best
    left, top, _, _ = load_font(size, bold).getbbox(text, anchor="ls")
    origin = (float(ink.x - left), float(ink.y - top))
    colour = ink_colour(image, box, mask, background)
    return TextStyle(origin, size, bold, colour, ink, centred)


#: Glyphs at least this share of the tallest one's height are letters whose height measures the font (not dots,
#: commas or the scratches beside them).
_TALL_GLYPH = 0.6


def glyph_stats(mask: np.ndarray) -> tuple[float, float]:
    """(letter height, stroke width) in pixels of the glyphs in bool `mask`: the median height of the tall glyph
    components (`_TALL_GLYPH`) and twice the median distance to the background along their ridges. (0, 0) when
    the mask is empty."""
    import cv2

    n, _comp, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    if n <= 1:
        return 0.0, 0.0
    heights = stats[1:, cv2.CC_STAT_HEIGHT].astype(float)
    tall = heights[heights >= _TALL_GLYPH * heights.max()]
    dist = cv2.distanceTransform(np.pad(mask, 1).astype(np.uint8), cv2.DIST_L2, 3)[1:-1, 1:-1]
    ridge = mask & (dist >= cv2.dilate(dist, np.ones((3, 3), np.uint8)) - 1e-6) & (dist > 0)
    stroke = 2.0 * float(np.median(dist[ridge])) if ridge.any() else 1.0
    return float(np.median(tall)), stroke


def _rendered(font: Any, text: str) -> np.ndarray | None:
    """Bool mask of `text` drawn in `font` (anti-aliased pixels from half), cropped to its ink; None when empty."""
    from PIL import Image, ImageDraw

    left, top, right, bottom = font.getbbox(text, anchor="ls")
    w, h = max(1, right - left), max(1, bottom - top)
    canvas = Image.new("L", (w + 4, h + 4), 0)
    ImageDraw.Draw(canvas).text((2 - left, 2 - top), text, font=font, fill=255, anchor="ls")
    drawn = np.asarray(canvas) >= 128
    return drawn if drawn.any() else None


class _TextReplacer(Tool):
    """Shared steps of the replacers; subclasses say how the old glyphs are erased."""

    def _erase(self, image: np.ndarray, planned: Sequence[_Planned], params: Mapping[str, Any]) -> np.ndarray:
        raise NotImplementedError

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        new_text = (subtask.result or "").strip()
        if not new_text:
            raise InputError(f"{self.spec.id}: text replacement needs the new text (subtask.result), got none")
        image = state.image
        height, width = image.shape[:2]
        planned: list[_Planned] = []
        for match, box in locate_text(image, _regions(state), subtask.target):
            sign = measure_sign(image, box)
            box = sign.box
            if not sign.fill_mask.any():
                raise ToolError(f"cannot separate the letters of {match.text!r} from their background")
            # A word inside a line is centred in its slot; a whole line keeps its start unless it is centred itself.
            centred = not match.whole_region or abs(box.x + box.w / 2 - width / 2) < 0.05 * width
            style = measure_style(image, match.text, box, sign.fill_mask, sign.background, centred)
            style = replace(style, colour=sign.fill, outline=sign.outline, outline_px=sign.outline_px)
            style = replace(style, shadow=sign.shadow, shadow_offset=sign.shadow_offset)
            outside = sign.outside if sign.outside is not None else np.zeros_like(sign.letters)
            span = bare_panel_run(image, (box.y, box.y2), box.x, box.x2, panel_colour(image, sign))
            planned.append(_Planned(match, box, sign.background, sign.letters, style, outside, span))
        erased = self._erase(image, planned, params)
        out, drawn = _draw_replacements(erased, planned, new_text)
        changed = boxes_mask([p.box for p in planned] + drawn, height, width, dilate=2)
        changed |= np.any(out != image, axis=-1)
        notes = f"replaced {len(planned)} occurrence(s) of {subtask.target!r} with {new_text!r}"
        return ToolOutput(image=out, edited_region=changed, notes=notes)


class PillowTextReplacer(_TextReplacer):
    """Replace text by painting the old letters over with the background colour measured around them, then writing
    the new text in the same size, weight, colour and position. Fast; best on flat or smoothly shaded backgrounds.

    Params: `margin` (pixels added around the old letters before painting them out, so their anti-aliased edges go
    too; default 2, retry 4).
    """

    def _erase(self, image: np.ndarray, planned: Sequence[_Planned], params: Mapping[str, Any]) -> np.ndarray:
        out = image.copy()
        grow = int_param(params, "margin")
        for p in planned:
            b = p.box
            mask = dilate_mask(p.mask, grow) & ~dilate_mask(p.outside, 1)
            fill = np.clip(np.round(p.background.render()), 0, 255).astype(np.uint8)
            region = out[b.y : b.y2, b.x : b.x2]
            region[mask] = fill[mask]
        return out


class InpaintTextReplacer(_TextReplacer):
    """Replace text by inpainting the old letters (OpenCV Telea, which continues the surrounding colours inward), then
    writing the new text like `PillowTextReplacer`. Better than flat paint on gradients and textures.

    Params: `radius` (inpainting neighbourhood in pixels, default 3, retry 7) and `dilate` (pixels added around the
    letters, default 2, retry 4).
    """

    def load(self) -> None:
        import cv2  # noqa: F401  (fail early, in load, if OpenCV is missing)

    def _erase(self, image: np.ndarray, planned: Sequence[_Planned], params: Mapping[str, Any]) -> np.ndarray:
        height, width = image.shape[:2]
        mask = np.zeros((height, width), dtype=bool)
        keep = np.zeros((height, width), dtype=bool)
        for p in planned:
            b = p.box
            mask[b.y : b.y2, b.x : b.x2] |= p.mask
            keep[b.y : b.y2, b.x : b.x2] |= dilate_mask(p.outside, 1)
        grow, radius = int_param(params, "dilate"), float_param(params, "radius")
        return inpaint_telea(image, dilate_mask(mask, grow) & ~keep, radius)


def inpaint_telea(image: np.ndarray, mask: np.ndarray, radius: float) -> np.ndarray:
    """Fill `mask` (bool H×W) with OpenCV's Telea inpainting over a `radius`-pixel neighbourhood; other pixels stay."""
    import cv2

    if not mask.any():
        return image.copy()
    ys, xs = np.nonzero(mask)
    margin = int(3 * radius) + 8
    height, width = mask.shape
    y1, y2 = max(0, int(ys.min()) - margin), min(height, int(ys.max()) + margin + 1)
    x1, x2 = max(0, int(xs.min()) - margin), min(width, int(xs.max()) + margin + 1)
    crop = np.ascontiguousarray(image[y1:y2, x1:x2])
    crop_mask = mask[y1:y2, x1:x2].astype(np.uint8) * 255
    filled = cv2.inpaint(crop, crop_mask, float(radius), cv2.INPAINT_TELEA)
    out = image.copy()
    region = out[y1:y2, x1:x2]
    region[mask[y1:y2, x1:x2]] = filled[mask[y1:y2, x1:x2]]
    return out


def _line_room(p: _Planned) -> int:
    """Width a whole line's new text may take: to the bare panel's end from where it starts (from both ends around
    its centre when centred), less a margin of a tenth of the letters' size (pixels)."""
    st, (x1, x2) = p.style, p.panel_span
    margin = round(0.1 * st.size)
    if st.centred:
        centre = st.ink.x + st.ink.w / 2
        return max(0, round(2 * min(centre - x1, x2 - centre)) - 2 * margin)
    return max(0, x2 - st.ink.x - margin)


def _draw_replacements(image: np.ndarray, planned: Sequence[_Planned], new_text: str) -> tuple[np.ndarray, list[Box]]:
    """Write `new_text` for each planned replacement; return the image and the ink boxes drawn (image pixels)."""
    from PIL import Image, ImageDraw

    height, width = image.shape[:2]
    pil = Image.fromarray(image)
    draw = ImageDraw.Draw(pil)
    drawn: list[Box] = []
    for p in planned:
        st = p.style
        size = st.size
        font = load_font(size, st.bold)
        left, top, right, bottom = font.getbbox(new_text, anchor="ls")
        # A word inside a line keeps about its old ink's width (its box reaches into the spaces around it, and a
        # wider word there glues onto its neighbours); a whole line may use its box and run on over the bare panel
        # beside it, as far as the text-fit check allows ('PIZZA' → 'CLOSED' shrank to ×0.70 and failed on size).
        # (Not the OCR box's width: it reaches past the panel's edge — 'OPEN' → 'CLOSED' put the D on the sky.)
        room = round(_WORD_ROOM * st.ink.w) if not p.match.whole_region else max(st.ink.w, _line_room(p))
        if right - left > room:  # too long for the old box: shrink, keeping the baseline
            size = max(_MIN_FONT_PX, int(size * room / (right - left)))
            font = load_font(size, st.bold)
            left, top, right, bottom = font.getbbox(new_text, anchor="ls")
        oy = st.origin[1]
        ox = st.ink.x + st.ink.w / 2 - (left + right) / 2 if st.centred else st.ink.x - left
        stroke = st.outline_px if st.outline is not None else 0
        if st.shadow is not None:
            sx, sy = st.shadow_offset
            draw.text((ox + sx, oy + sy), new_text, font=font, fill=st.shadow, anchor="ls")
        draw.text(
            (ox, oy), new_text, font=font, fill=st.colour, anchor="ls", stroke_width=stroke, stroke_fill=st.outline
        )
        sx, sy = st.shadow_offset
        x1, y1 = int(np.floor(ox + left + min(0, sx))) - stroke, int(np.floor(oy + top + min(0, sy))) - stroke
        x2, y2 = int(np.ceil(ox + right + max(0, sx))) + stroke, int(np.ceil(oy + bottom + max(0, sy))) + stroke
        try:
            drawn.append(Box(x1, y1, max(1, x2 - x1), max(1, y2 - y1)).clip(width, height))
        except InputError:
            continue
    return np.asarray(pil, dtype=np.uint8).copy(), drawn


# ------------------------------------------------------------------------------------------------------- addition


_NAMED_POSITIONS: dict[str, tuple[float, float]] = {
    "top": (0.5, 0.08),
    "bottom": (0.5, 0.92),
    "center": (0.5, 0.5),
    "centre": (0.5, 0.5),
    "middle": (0.5, 0.5),
    "top left": (0.08, 0.08),
    "top right": (0.92, 0.08),
    "bottom left": (0.08, 0.92),
    "bottom right": (0.92, 0.92),
}


class PillowTextWriter(Tool):
    """Write new text onto the image (a caption, a label, a sign).

    Options, from `subtask.params` (what the user asked for) or else the tool params: `position` — (x, y) top-left of
    the text in pixels, or "top", "bottom", "center", "top left", …; when absent, the flattest area large enough that
    holds no detected text. `size` — font size in pixels (0 or absent: 6 % of the image height). `color` — RGB list
    or colour name (default black or white, whichever contrasts with the background there). `bold` — default False.
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        from PIL import Image, ImageDraw

        text = (subtask.result or "").strip()
        if not text:
            raise InputError("text addition needs the text to write (subtask.result), got none")
        image = state.image
        height, width = image.shape[:2]
        options = {**params, **subtask.params}
        size = int_param(options, "size") or max(10, round(0.06 * height))
        bold = bool(options.get("bold", False))
        font = load_font(size, bold)
        left, top, right, bottom = font.getbbox(text)
        if right - left > 0.94 * width:  # too wide for the image: shrink to fit
            size = max(_MIN_FONT_PX, int(size * 0.94 * width / (right - left)))
            font = load_font(size, bold)
            left, top, right, bottom = font.getbbox(text)
        text_w, text_h = right - left, bottom - top
        if text_w > width or text_h > height:
            raise ToolError(f"{text!r} does not fit in the {width}x{height} image even at {size} px")
        x, y = _placement(state, options.get("position"), text_w, text_h)
        ink = Box(x, y, text_w, text_h).clip(width, height)
        colour = (
            parse_colour(options["color"])
            if options.get("color") is not None
            else contrasting_colour(image[ink.y : ink.y2, ink.x : ink.x2].reshape(-1, 3).mean(axis=0))
        )
        pil = Image.fromarray(image)
        ImageDraw.Draw(pil).text((x - left, y - top), text, font=font, fill=colour)
        out = np.asarray(pil, dtype=np.uint8).copy()
        region = boxes_mask([ink], height, width, dilate=2) | np.any(out != image, axis=-1)
        return ToolOutput(image=out, edited_region=region, notes=f"wrote {text!r} at ({x}, {y}), {size} px")


def _placement(state: EditState, position: Any, text_w: int, text_h: int) -> tuple[int, int]:
    """Top-left pixel for a text_w × text_h block: the requested one, a named one, or the flattest free area."""
    height, width = state.height, state.width
    if isinstance(position, str):
        key = position.strip().lower().replace("-", " ").replace("_", " ")
        if key not in _NAMED_POSITIONS:
            raise InputError(f"unknown position {position!r}; use (x, y) or one of {sorted(_NAMED_POSITIONS)}")
        fx, fy = _NAMED_POSITIONS[key]
        x, y = round(fx * width - text_w / 2), round(fy * height - text_h / 2)
    elif position is not None:
        if not (isinstance(position, Sequence) and len(position) == 2):
            raise InputError(f"position must be (x, y) in pixels or a name like 'top', got {position!r}")
        x, y = round(float(position[0])), round(float(position[1]))
        if not (0 <= x < width and 0 <= y < height):
            raise InputError(f"position ({x}, {y}) is outside the {width}x{height} image")
    else:
        x, y = _flattest_area(state, text_w, text_h)
    return min(max(0, x), max(0, width - text_w)), min(max(0, y), max(0, height - text_h))


def _flattest_area(state: EditState, text_w: int, text_h: int) -> tuple[int, int]:
    """Top-left of the text block (with a margin) whose pixels vary least and that overlaps no detected text.

    Variance comes from integral images of the grey image, so every candidate costs O(1); a small pull toward the
    image centre breaks ties between equally flat areas.
    """
    height, width = state.height, state.width
    margin = max(2, text_h // 4)
    win_w, win_h = min(width, text_w + 2 * margin), min(height, text_h + 2 * margin)
    grey = state.image.astype(np.float64) @ np.array([0.299, 0.587, 0.114])
    s1 = np.pad(grey.cumsum(0).cumsum(1), ((1, 0), (1, 0)))
    s2 = np.pad((grey**2).cumsum(0).cumsum(1), ((1, 0), (1, 0)))
    taken = [r.box for r in state.artifacts.get("text_regions", ()) if isinstance(r, TextRegion)]
    stride = max(2, min(win_w, win_h) // 3)
    best: tuple[float, int, int] | None = None
    area = win_w * win_h
    for y in range(0, height - win_h + 1, stride):
        for x in range(0, width - win_w + 1, stride):
            if any(x < b.x2 and b.x < x + win_w and y < b.y2 and b.y < y + win_h for b in taken):
                continue
            y2, x2 = y + win_h, x + win_w
            total = s1[y2, x2] - s1[y, x2] - s1[y2, x] + s1[y, x]
            total2 = s2[y2, x2] - s2[y, x2] - s2[y2, x] + s2[y, x]
            std = float(np.sqrt(max(0.0, total2 / area - (total / area) ** 2)))
            pull = np.hypot((x + win_w / 2) / width - 0.5, (y + win_h / 2) / height - 0.5)
            score = std + 4.0 * pull
            if best is None or score < best[0]:
                best = (score, x + margin, y + margin)
    if best is None:
        raise ToolError(f"no free area of {win_w}x{win_h} px for the text: the image is full of detected text")
    return best[1], best[2]


# ----------------------------------------------------------------------------------------- redaction and marking


class TextRedactor(Tool):
    """Cover matching text (a word, "phone number", "email", or all text) with an opaque box.

    Params: `pad` (pixels added around each box, default 2, retry 6) and `color` (default black; the user's choice
    in `subtask.params["color"]` wins).
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        image = state.image
        height, width = image.shape[:2]
        colour = parse_colour(_option(subtask, params, "color", (0, 0, 0)))
        pad = int_param(params, "pad")
        boxes = [expand_box(box, pad, width, height) for _, box in locate_text(image, _regions(state), subtask.target)]
        out = image.copy()
        for b in boxes:
            out[b.y : b.y2, b.x : b.x2] = colour
        notes = f"redacted {len(boxes)} occurrence(s) of {subtask.target or 'all text'!r}"
        return ToolOutput(image=out, edited_region=boxes_mask(boxes, height, width), notes=notes)


class KeywordHighlighter(Tool):
    """Mark every occurrence of a word with a translucent highlighter stroke, keeping the text readable.

    Params: `alpha` (opacity of the marker, default 0.4, retry 0.5) and `color` (default yellow; the user's choice
    in `subtask.params["color"]` wins).
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        image = state.image
        height, width = image.shape[:2]
        alpha = float_param(params, "alpha")  # below 1 so the text stays readable
        colour = np.array(parse_colour(_option(subtask, params, "color", (255, 255, 0))))
        boxes = [box for _, box in locate_text(image, _regions(state), subtask.target)]
        mask = boxes_mask(boxes, height, width)
        out = image.copy()
        blended = (1.0 - alpha) * image[mask].astype(np.float32) + alpha * colour.astype(np.float32)
        out[mask] = np.clip(np.round(blended), 0, 255).astype(np.uint8)
        notes = f"highlighted {len(boxes)} occurrence(s) of {subtask.target!r}"
        return ToolOutput(image=out, edited_region=mask, notes=notes)


def _option(subtask: Subtask, params: Mapping[str, Any], name: str, default: Any) -> Any:
    """A user-facing option: the subtask's own value (the user asked for it), else the tool parameter, else default."""
    for source in (subtask.params, params):
        if source.get(name) is not None:
            return source[name]
    return default


def _regions(state: EditState) -> tuple[TextRegion, ...]:
    regions = state.artifacts.get("text_regions")
    if not regions:
        raise ToolError("no text regions in the edit state: text detection must run before this tool")
    return tuple(regions)
