"""Setting the text of a synthetic text scene: fonts, fitting a block of lines to an image, drawing it into a rotated
alpha layer, and the ground-truth boxes of spans of it after rotation (used by `costa.synthetic.scenes`).

Deterministic and free of randomness: every choice (font, size, angle, place) comes in from the scene's generator.
Units: pixels, degrees counter-clockwise (as Pillow's `Image.rotate`), alpha in [0, 1].

Example:
    >>> block = fit_block("pillow", 40, ["OPEN"], 320, 240)
    >>> block.size, block.line_height, block.height
    (40, 52, 52)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from costa.types import Box

_FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
#: Font name → file under /usr/share/fonts/truetype/dejavu; "pillow" is Pillow's built-in scalable font (Aileron).
_FONT_FILES: dict[str, str] = {
    "dejavu-sans-bold": "DejaVuSans-Bold.ttf",
    "dejavu-sans": "DejaVuSans.ttf",
    "dejavu-serif-bold": "DejaVuSerif-Bold.ttf",
    "dejavu-serif": "DejaVuSerif.ttf",
    "dejavu-condensed-bold": "DejaVuSansCondensed-Bold.ttf",
    "dejavu-mono-bold": "DejaVuSansMono-Bold.ttf",
}


def available_fonts() -> tuple[str, ...]:
    """Font names usable here: the DejaVu faces that are installed, then "pillow" (always present)."""
    return (*(name for name, file in _FONT_FILES.items() if (_FONT_DIR / file).exists()), "pillow")


def load_font(name: str, size: int) -> Any:
    """Load a font by name (about 1 ms)."""
    from PIL import ImageFont

    if name == "pillow":
        return ImageFont.load_default(size=size)
    if name not in _FONT_FILES:
        raise ValueError(f"unknown font {name!r}; known: {(*_FONT_FILES, 'pillow')}")
    return ImageFont.truetype(str(_FONT_DIR / _FONT_FILES[name]), size)


def rotate_points(points: np.ndarray, angle: float, centre: tuple[float, float]) -> np.ndarray:
    """Where PIL's `Image.rotate(angle, center=centre)` (counter-clockwise on screen, y down) moves (x, y) points."""
    a = math.radians(angle)
    cx, cy = centre
    dx, dy = points[:, 0] - cx, points[:, 1] - cy
    return np.stack([cx + dx * math.cos(a) + dy * math.sin(a), cy - dx * math.sin(a) + dy * math.cos(a)], axis=1)


def rotated_box(box: tuple[float, float, float, float], angle: float, centre: tuple[float, float]) -> Box:
    """The pixel bounding box of the (x1, y1, x2, y2) box after rotating it by `angle` about `centre`."""
    x1, y1, x2, y2 = box
    pts = rotate_points(np.array([[x1, y1], [x2, y1], [x2, y2], [x1, y2]], np.float64), angle, centre)
    bx1, by1 = math.floor(pts[:, 0].min()), math.floor(pts[:, 1].min())
    bx2, by2 = math.ceil(pts[:, 0].max()), math.ceil(pts[:, 1].max())
    return Box(bx1, by1, max(1, bx2 - bx1), max(1, by2 - by1))


@dataclass(frozen=True)
class TextBlock:
    """Lines of text set in one font at one size: `width` is the widest line's, `height` the lines' (pixels)."""

    font_name: str
    size: int
    lines: tuple[str, ...]
    line_height: int
    width: int

    @property
    def height(self) -> int:
        return self.line_height * len(self.lines)


def fit_block(font_name: str, size: int, lines: Sequence[str], width: int, height: int) -> TextBlock:
    """Shrink the font from `size` until the block fills at most 84 % of `width` and 76 % of `height` (pixels), not
    below 20 px (or `size` when smaller).

    Raises:
        ValueError: the lines do not fit even at that floor.
    """
    px, floor = size, min(size, 20)
    while True:
        f = load_font(font_name, px)
        widths = [right - left for left, _, right, _ in (f.getbbox(t) for t in lines)]
        line_h = round(px * 1.3)
        if max(widths) <= 0.84 * width and line_h * len(lines) <= 0.76 * height:
            return TextBlock(font_name, px, tuple(lines), line_h, max(widths))
        if px <= floor:
            raise ValueError(f"{list(lines)!r} does not fit a {width}x{height} image even at {floor} px")
        px = max(floor, int(px * 0.9))


@dataclass(frozen=True, eq=False)
class SetText:
    """A block drawn at `origin` (its top-left, before rotation) and rotated by `angle` about its centre.

    `alpha` is the text coverage over the whole image (float32 H×W in [0, 1]); `window` = (x1, y1, x2, y2) the part of
    the image it can touch; `origins` each line's drawing origin (before rotation)."""

    block: TextBlock
    font: Any
    alpha: np.ndarray
    window: tuple[int, int, int, int]
    origins: tuple[tuple[float, float], ...]
    angle: float
    centre: tuple[float, float]

    def span_box(self, line: int, start: int, end: int) -> Box:
        """The ground-truth box of characters start…end of a line, after rotation, clipped to the image."""
        f = self.font
        text = self.block.lines[line]
        left, top, right, bottom = f.getbbox(text[start:end])
        dx = f.getlength(text[:start])
        ox, oy = self.origins[line]
        height, width = self.alpha.shape
        corners = (ox + dx + left, oy + top, ox + dx + right, oy + bottom)
        return rotated_box(corners, self.angle, self.centre).clip(width, height)


def set_text(
    block: TextBlock, origin: tuple[float, float], centred: bool, angle: float, shape: tuple[int, int]
) -> SetText:
    """Draw `block` with its top-left at `origin` (lines centred or left-aligned) into an alpha layer covering the
    block's reach at any rotation, rotated by `angle` degrees about the block's centre, on an image of `shape` (H, W).
    """
    from PIL import Image, ImageDraw

    height, width = shape
    x0, y0 = origin
    f = load_font(block.font_name, block.size)
    centre = (x0 + block.width / 2, y0 + block.height / 2)
    reach = math.hypot(block.width, block.height) / 2 + block.size + 4
    wx1, wy1 = max(0, int(centre[0] - reach)), max(0, int(centre[1] - reach))
    wx2, wy2 = min(width, int(centre[0] + reach) + 1), min(height, int(centre[1] + reach) + 1)
    layer = Image.new("L", (wx2 - wx1, wy2 - wy1), 0)
    draw = ImageDraw.Draw(layer)
    origins: list[tuple[float, float]] = []
    for i, text in enumerate(block.lines):
        left, _, right, _ = f.getbbox(text)
        ox = x0 + (block.width - (right - left)) / 2 - left if centred else x0 - left
        oy = y0 + i * block.line_height
        draw.text((ox - wx1, oy - wy1), text, font=f, fill=255)
        origins.append((ox, oy))
    if abs(angle) > 1e-6:
        layer = layer.rotate(angle, resample=Image.Resampling.BILINEAR, center=(centre[0] - wx1, centre[1] - wy1))
    alpha = np.zeros((height, width), np.float32)
    alpha[wy1:wy2, wx1:wx2] = np.asarray(layer, dtype=np.float32) / np.float32(255.0)
    return SetText(block, f, alpha, (wx1, wy1, wx2, wy2), tuple(origins), angle, centre)
