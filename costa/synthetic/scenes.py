"""Synthetic scenes with ground truth, for testing and measuring the text and object tools.

Every generator is deterministic under its `seed` (numpy `default_rng`; photo crops are chosen by the same generator)
and fast (under 50 ms per scene at ≤ 640 px on one CPU core).

- **Text scenes** (`make_text_scene`, `text_scenes`): signs and labels with known words in several fonts (DejaVu when
  installed, always Pillow's built-in scalable font), 20–90 px, rotated by up to ±3°, on flat, gradient, noise,
  woven-texture or photo backgrounds (on a photo the text sits on a sign panel, as real signs do). Ground truth: the
  box of every word and line after rotation, the text's alpha mask, and the background without the text. "contact"
  scenes add a phone number and an email address for redaction, with the boxes of those spans.
- **Object scenes** (`make_object_scene`, `random_object_scene`, `object_scenes`): one shaded object (ellipse,
  rectangle or blob lit from one side, so it has shading to keep) of a known, named colour, with its exact bool mask
  and box, and the background as it was before the object (to score a removal against the truth).

Photo backgrounds are crops of the shared benchmark photos (`../shared/benchmarks/editeval_v1/images` and
`magicbrush_sample/images/orig`); when those are absent the "photo" kind is simply not drawn.

Units: pixels for sizes and boxes (x, y, w, h as `costa.types.Box`), degrees for angles, RGB 0–255 for colours.

Example:
    >>> s = make_object_scene("texture", "ellipse", seed=1)
    >>> s.image.shape, s.mask.dtype, bool(s.mask.any())
    ((192, 256, 3), dtype('bool'), True)
    >>> t = make_text_scene(3, background="flat")
    >>> t.target.text in t.text, t.image.shape == t.background.shape
    (True, True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from costa.synthetic.backgrounds import (
    BackgroundKind,
    colour_in_band,
    grain,
    make_background,
    photo_files,
    pick_background,
    random_background,
    to_uint8,
)
from costa.synthetic.lettering import SetText, TextBlock, available_fonts, fit_block, set_text
from costa.synthetic.sign_words import NEW_WORDS as NEW_WORDS
from costa.synthetic.sign_words import SIGN_WORDS as SIGN_WORDS
from costa.synthetic.sign_words import contact_lines, sign_lines
from costa.types import Box, TextRegion

ShapeKind = Literal["ellipse", "rectangle"]
SceneShape = Literal["ellipse", "rectangle", "blob"]
TextKind = Literal["sign", "contact"]

SCENE_SHAPES: tuple[str, ...] = ("ellipse", "rectangle", "blob")

#: Object colours: (name as in tool_tables/colours.csv, RGB of the lit surface).
OBJECT_COLOURS: tuple[tuple[str, tuple[int, int, int]], ...] = (
    ("red", (205, 35, 40)),
    ("blue", (40, 80, 200)),
    ("green", (40, 150, 60)),
    ("yellow", (235, 205, 40)),
    ("orange", (235, 130, 30)),
    ("purple", (125, 50, 165)),
    ("pink", (235, 120, 170)),
    ("teal", (20, 130, 130)),
)


# ------------------------------------------------------------------------------------------------------ records


@dataclass(frozen=True, eq=False)
class ObjectScene:
    """An RGB uint8 image, its object's bool mask and box, and the background as it was before the object.

    `colour` is the object's lit RGB and `colour_name` its name in tool_tables/colours.csv; `shape` and
    `background_kind` say how the scene was made.
    """

    image: np.ndarray
    background: np.ndarray
    mask: np.ndarray
    box: Box
    colour: tuple[int, int, int] = (0, 0, 0)
    colour_name: str = ""
    shape: str = ""
    background_kind: str = ""


@dataclass(frozen=True)
class WordBox:
    """A span of drawn text and its ground-truth pixel box (the rotated ink box's bounding box); `kind` is "" for a
    plain word, or "phone number" / "email" for a sensitive span."""

    text: str
    box: Box
    kind: str = ""


@dataclass(frozen=True)
class TextLine:
    """One drawn line: its text, its box and its words (split on spaces) in reading order."""

    text: str
    box: Box
    words: tuple[WordBox, ...]


@dataclass(frozen=True, eq=False)
class TextScene:
    """A text scene and its ground truth.

    Attributes:
        image: RGB uint8 (H, W, 3) with the text.
        background: the same scene without the text (sign panel included), RGB uint8.
        alpha: float32 (H, W) text coverage in [0, 1] (anti-aliased).
        lines: the drawn lines, top to bottom.
        target: the word an edit should act on (unique in the scene); for "contact" scenes the phone number.
        sensitive: phone-number and email spans ("contact" scenes), else empty.
        font: font name (see `available_fonts`); size: font size in pixels; colour: text RGB; angle: rotation in
            degrees (counter-clockwise); background_kind: a kind from `backgrounds.SCENE_BACKGROUNDS`; kind: "sign"
            or "contact"; style: the sign style (`costa.synthetic.sign_styles`), "plain" as drawn here.
    """

    image: np.ndarray
    background: np.ndarray
    alpha: np.ndarray
    lines: tuple[TextLine, ...]
    target: WordBox
    sensitive: tuple[WordBox, ...]
    font: str
    size: int
    colour: tuple[int, int, int]
    angle: float
    background_kind: str
    kind: str
    style: str = "plain"

    @property
    def words(self) -> tuple[WordBox, ...]:
        return tuple(w for line in self.lines for w in line.words)

    @property
    def text(self) -> str:
        """All lines joined by newlines."""
        return "\n".join(line.text for line in self.lines)

    @property
    def ink(self) -> np.ndarray:
        """Bool (H, W) mask of the text pixels (coverage ≥ 1/8)."""
        return self.alpha >= 0.125

    def regions(self, pad: int = 3) -> tuple[TextRegion, ...]:
        """Ground-truth text regions: one per line, its box grown by `pad` pixels (OCR boxes have a similar margin),
        its exact text, confidence 1.0."""
        height, width = self.alpha.shape
        out = []
        for line in self.lines:
            b = line.box
            box = Box(b.x - pad, b.y - pad, b.w + 2 * pad, b.h + 2 * pad).clip(width, height)
            corners = ((box.x, box.y), (box.x2, box.y), (box.x2, box.y2), (box.x, box.y2))
            out.append(TextRegion(box, line.text, 1.0, tuple((float(x), float(y)) for x, y in corners)))
        return tuple(out)


# --------------------------------------------------------------------------------------------------- resources


def _size(rng: np.random.Generator, value: int | None, low: int, high: int) -> int:
    return int(value) if value is not None else int(rng.integers(low // 8, high // 8 + 1)) * 8


# ------------------------------------------------------------------------------------------------- text scenes


@dataclass(frozen=True)
class Lettering:
    """How a text scene's text is set; None: drawn from the scene's seed.

    font: a name from `available_fonts()`; size: font size in pixels (default 20–90, 20–48 on contact cards; shrunk to
    fit); angle: rotation in degrees, counter-clockwise (default uniform in ±3).
    """

    font: str | None = None
    size: int | None = None
    angle: float | None = None


@dataclass(frozen=True)
class SignText:
    """What a sign says ("sign" scenes only): `lines` to draw instead of random sign words, and the `target` word to
    mark (default: a random drawn word)."""

    lines: Sequence[str] | None = None
    target: str | None = None


def _scene_text(
    rng: np.random.Generator, kind: str, text: SignText
) -> tuple[list[str], list[tuple[int, int, int, str]]]:
    if kind == "sign":
        texts, spans = (list(text.lines), []) if text.lines is not None else sign_lines(rng)
    elif kind == "contact":
        texts, spans = contact_lines(rng)
    else:
        raise ValueError(f"unknown text scene kind {kind!r}; expected sign or contact")
    if not texts or not all(t.strip() for t in texts):
        raise ValueError(f"text lines must be non-empty, got {texts!r}")
    return texts, spans


def _with_panel(
    bg: np.ndarray, block: TextBlock, origin: tuple[float, float], rng: np.random.Generator, light: bool
) -> np.ndarray:
    """A photo background with a sign panel under the text block at `origin`, as real signs have."""
    height, width = bg.shape[:2]
    x0, y0 = origin
    pad_x, pad_y = 0.5 * block.size, 0.35 * block.size
    px1, py1 = max(0, int(x0 - pad_x)), max(0, int(y0 - pad_y))
    px2, py2 = min(width, int(x0 + block.width + pad_x)), min(height, int(y0 + block.height + pad_y))
    panel = random_background("gradient", py2 - py1, px2 - px1, rng, light=light)
    bg = bg.copy()
    bg[py1:py2, px1:px2] = panel
    return bg


def _drawn_lines(drawn: SetText) -> tuple[TextLine, ...]:
    """Each drawn line with its box and its words' boxes (split on spaces)."""
    out: list[TextLine] = []
    for i, text in enumerate(drawn.block.lines):
        words, pos = [], 0
        for word in text.split(" "):
            start = text.index(word, pos)
            pos = start + len(word)
            if word:
                words.append(WordBox(word, drawn.span_box(i, start, pos)))
        out.append(TextLine(text, drawn.span_box(i, 0, len(text)), tuple(words)))
    return tuple(out)


def _target_word(
    rng: np.random.Generator, lines: tuple[TextLine, ...], sensitive: tuple[WordBox, ...], target: str | None
) -> WordBox:
    if sensitive:
        return sensitive[0]
    all_words = [w for line in lines for w in line.words]
    if target is None:
        return all_words[int(rng.integers(len(all_words)))]
    matching = [w for w in all_words if w.text == target]
    if not matching:
        raise ValueError(f"target {target!r} is not one of the drawn words {[w.text for w in all_words]}")
    return matching[0]


def make_text_scene(
    seed: int,
    *,
    kind: TextKind = "sign",
    background: str | None = None,
    height: int | None = None,
    width: int | None = None,
    lettering: Lettering | None = None,
    text: SignText | None = None,
    photos: Sequence[Path] | None = None,
) -> TextScene:
    """Draw a sign or contact card with known text; every unset choice is drawn from `seed`.

    Args:
        seed: the scene's seed; the same seed (and arguments) gives the same scene, byte for byte.
        kind: "sign" (1–3 lines of sign words) or "contact" (title, phone number, email).
        background: a kind from `backgrounds.SCENE_BACKGROUNDS` (default: random; "photo" only when photos exist).
        height, width: image size in pixels (default: random, 240–480 × 360–640).
        lettering: font, size and angle (`Lettering`; default: all drawn from `seed`).
        text: the lines to draw and the target word (`SignText`, "sign" only; default: random sign words).
        photos: photo files for "photo" backgrounds (default: `photo_files()`).

    Raises:
        ValueError: an unknown option, or text that cannot fit the image at 20 px (or the requested smaller size).
    """
    lettering, text = lettering or Lettering(), text or SignText()
    rng = np.random.default_rng(seed)
    photos = photo_files() if photos is None else tuple(photos)
    height = _size(rng, height, 240, 480)
    width = _size(rng, width, 360, 640)
    bg_kind = pick_background(rng, background, photos)
    fonts = available_fonts()
    font_name = lettering.font if lettering.font is not None else fonts[int(rng.integers(len(fonts)))]
    texts, spans = _scene_text(rng, kind, text)
    size = lettering.size
    px = int(size) if size is not None else int(rng.integers(20, 91) if kind == "sign" else rng.integers(20, 49))
    rot = float(lettering.angle) if lettering.angle is not None else float(rng.uniform(-3.0, 3.0))
    light_bg = bool(rng.random() < 0.7)

    block = fit_block(font_name, px, texts, width, height)
    x0 = float(rng.uniform(0.08 * width, width - block.width - 0.08 * width))
    y0 = float(rng.uniform(0.1 * height, height - block.height - 0.1 * height))
    centred = bool(rng.random() < 0.5)

    bg = random_background(bg_kind, height, width, rng, light=light_bg, strength=0.6, photos=photos)
    if bg_kind == "photo":
        bg = _with_panel(bg, block, (x0, y0), rng, light_bg)
    ink_rgb = colour_in_band(rng, not light_bg)
    colour = (round(float(ink_rgb[0])), round(float(ink_rgb[1])), round(float(ink_rgb[2])))

    drawn = set_text(block, (x0, y0), centred, rot, (height, width))
    lines = _drawn_lines(drawn)
    sensitive = tuple(WordBox(texts[li][s:e], drawn.span_box(li, s, e), k) for li, s, e, k in spans)
    target_word = _target_word(rng, lines, sensitive, text.target)

    wx1, wy1, wx2, wy2 = drawn.window
    image = bg.copy()
    a = drawn.alpha[wy1:wy2, wx1:wx2, None]
    window = bg[wy1:wy2, wx1:wx2].astype(np.float32)
    image[wy1:wy2, wx1:wx2] = to_uint8(window + a * (ink_rgb - window))
    return TextScene(
        image=image,
        background=bg,
        alpha=drawn.alpha,
        lines=lines,
        target=target_word,
        sensitive=sensitive,
        font=font_name,
        size=block.size,
        colour=colour,
        angle=rot,
        background_kind=bg_kind,
        kind=kind,
    )


def scene_seeds(n: int, seed: int, stream: str = "") -> tuple[int, ...]:
    """`n` independent 32-bit scene seeds derived from `seed` and a `stream` name (so each benchmark subtask gets its
    own cases, reproducibly)."""
    key = [seed, *stream.encode("utf-8")]
    return tuple(int(s) for s in np.random.SeedSequence(key).generate_state(n))


def text_scenes(n: int, seed: int = 0, kind: TextKind = "sign", stream: str = "", **options: Any) -> list[TextScene]:
    """`n` text scenes drawn from `seed` (see `make_text_scene` for `options`)."""
    options.setdefault("photos", photo_files())
    return [make_text_scene(s, kind=kind, **options) for s in scene_seeds(n, seed, stream or f"text-{kind}")]


# ----------------------------------------------------------------------------------------------- object scenes


def _shade(xx: np.ndarray, yy: np.ndarray, cx: float, cy: float, rx: float, ry: float, theta: float) -> np.ndarray:
    """Diffuse shading factor (0.55–1.15) for light from direction `theta` (radians; 5π/4 = upper left)."""
    u = (-(xx - cx) / rx * math.cos(theta) - (yy - cy) / ry * math.sin(theta)) / 2.0
    return np.clip(0.85 + 0.3 * u, 0.55, 1.15)


def make_object_scene(
    background: BackgroundKind = "flat",
    shape: ShapeKind = "ellipse",
    *,
    height: int = 192,
    width: int = 256,
    colour: tuple[int, int, int] = (40, 80, 200),
    seed: int = 0,
) -> ObjectScene:
    """Paint one shaded object in the centre of a fixed-palette background (see `make_background`).

    The object covers roughly the centre third of the image. Its shading is a diffuse light from the upper left:
    brightness falls from 1.15× to 0.55× of `colour` across the object, so its lightness varies by ~25 L* units —
    enough for a recolouring check to tell kept shading from a flat fill.
    """
    bg = make_background(background, height, width, seed)
    cy, cx = height / 2.0, width / 2.0
    ry, rx = height / 4.0, width / 5.0
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    if shape == "ellipse":
        mask = ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1.0
    elif shape == "rectangle":
        mask = (np.abs(yy - cy) <= ry) & (np.abs(xx - cx) <= rx)
    else:
        raise ValueError(f"unknown shape {shape!r}; expected ellipse or rectangle")
    # Diffuse shading: a light direction from the upper left, projected onto the object's extent.
    u = ((xx - cx) / rx + (yy - cy) / ry) / 2.0  # -1 (upper left) … +1 (lower right)
    shade = np.clip(0.85 - 0.3 * u, 0.55, 1.15)[..., None]
    obj = np.clip(np.array(colour, np.float32) * shade, 0, 255)
    image = bg.copy()
    image[mask] = np.rint(obj[mask]).astype(np.uint8)
    ys, xs = np.nonzero(mask)
    box = Box(int(xs.min()), int(ys.min()), int(xs.max() - xs.min() + 1), int(ys.max() - ys.min() + 1), label="object")
    return ObjectScene(image, bg, mask, box, tuple(colour), "", shape, background)  # type: ignore[arg-type]


def random_object_scene(
    seed: int,
    *,
    background: str | None = None,
    shape: str | None = None,
    height: int | None = None,
    width: int | None = None,
    colour: str | None = None,
    photos: Sequence[Path] | None = None,
) -> ObjectScene:
    """Paint one shaded object at a random place on a random background; unset choices are drawn from `seed`.

    The object (ellipse at any angle, axis-aligned rectangle, or a smooth blob) covers about 2–12 % of the image and
    stays at least 10 % of the image size away from the borders, so a box around it has surroundings to model. Its
    shading is a diffuse light from a random side (0.55–1.15 × the lit colour) plus faint grain.

    Args:
        seed: the scene's seed; the same seed and arguments give the same scene.
        background: a kind from `backgrounds.SCENE_BACKGROUNDS` (default random; "photo" only when photos exist).
        shape: one of `SCENE_SHAPES` (default random).
        height, width: pixels (default random, 240–480 × 320–640).
        colour: a name from `OBJECT_COLOURS` (default random).
        photos: photo files (default `photo_files()`).
    """
    rng = np.random.default_rng(seed)
    photos = photo_files() if photos is None else tuple(photos)
    height = _size(rng, height, 240, 480)
    width = _size(rng, width, 320, 640)
    bg_kind = pick_background(rng, background, photos)
    shape_kind = shape if shape is not None else SCENE_SHAPES[int(rng.integers(len(SCENE_SHAPES)))]
    names = [n for n, _ in OBJECT_COLOURS]
    if colour is not None and colour not in names:
        raise ValueError(f"unknown object colour {colour!r}; known: {names}")
    name = colour if colour is not None else names[int(rng.integers(len(names)))]
    rgb = dict(OBJECT_COLOURS)[name]
    bg = random_background(bg_kind, height, width, rng, light=bool(rng.random() < 0.5), photos=photos)

    side = min(height, width)
    ry, rx = rng.uniform(0.1, 0.22) * side, rng.uniform(0.1, 0.22) * side
    reach = 1.3 * max(rx, ry)  # no shape below extends farther than this from its centre
    cx = rng.uniform(reach + 0.05 * width, width - reach - 0.05 * width)
    cy = rng.uniform(reach + 0.05 * height, height - reach - 0.05 * height)
    y1, y2 = max(0, int(cy - reach) - 2), min(height, int(cy + reach) + 3)
    x1, x2 = max(0, int(cx - reach) - 2), min(width, int(cx + reach) + 3)
    yy, xx = np.mgrid[y1:y2, x1:x2].astype(np.float32)
    if shape_kind == "ellipse":
        phi = rng.uniform(0, math.pi)
        du = (xx - cx) * math.cos(phi) + (yy - cy) * math.sin(phi)
        dv = (yy - cy) * math.cos(phi) - (xx - cx) * math.sin(phi)
        local = (du / max(rx, ry)) ** 2 + (dv / min(rx, ry)) ** 2 <= 1.0
    elif shape_kind == "rectangle":
        local = (np.abs(xx - cx) <= rx * 0.9) & (np.abs(yy - cy) <= ry * 0.9)
    elif shape_kind == "blob":
        ang = np.arctan2((yy - cy) / ry, (xx - cx) / rx)
        rad = np.hypot((yy - cy) / ry, (xx - cx) / rx)
        edge = np.ones_like(ang)
        for k in (2, 3, 5):
            edge += rng.uniform(0.04, 0.12) * np.cos(k * ang + rng.uniform(0, 2 * math.pi))
        local = rad <= edge * 0.95
    else:
        raise ValueError(f"unknown shape {shape_kind!r}; expected one of {SCENE_SHAPES}")
    theta = rng.uniform(0, 2 * math.pi)
    shade = _shade(xx, yy, cx, cy, rx, ry, theta)[..., None]
    speckle = grain(rng, (*local.shape, 3), 2.0)
    obj = np.clip(np.asarray(rgb, np.float32) * shade + speckle, 0, 255)
    mask = np.zeros((height, width), dtype=bool)
    mask[y1:y2, x1:x2] = local
    image = bg.copy()
    region = image[y1:y2, x1:x2]
    region[local] = np.rint(obj[local]).astype(np.uint8)
    ys, xs = np.nonzero(mask)
    box = Box(int(xs.min()), int(ys.min()), int(xs.max() - xs.min() + 1), int(ys.max() - ys.min() + 1), label="object")
    return ObjectScene(image, bg, mask, box, rgb, name, shape_kind, bg_kind)


def object_scenes(n: int, seed: int = 0, stream: str = "objects", **options: Any) -> list[ObjectScene]:
    """`n` object scenes drawn from `seed` (see `random_object_scene` for `options`)."""
    options.setdefault("photos", photo_files())
    return [random_object_scene(s, **options) for s in scene_seeds(n, seed, stream)]
