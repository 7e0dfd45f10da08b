"""Sign styles for the synthetic text scenes: light text on dark or saturated panels, outlined and shadowed letters,
small signs on photographs — the text that real signs carry, each with ground truth.

A styled scene starts from `scenes.make_text_scene` (same seed, same words and layout) and is re-composited from its
text coverage: a panel is painted under the text block, the letters get an outline (the coverage dilated) or a drop
shadow (the coverage shifted), and the fill is drawn last. Ground truth follows: `background` is the scene with its
panel and without any of the text's pixels, `alpha` covers fill, outline and shadow (what a removal must restore),
`colour` is the fill.

Styles (`SIGN_STYLES`):
- "plain": the scene as `make_text_scene` draws it (dark or light text on the background, no panel);
- "light_on_dark": near-white or pale text on a dark panel;
- "light_on_saturated": white or yellow text on a saturated red, blue, green or orange panel ("SALE" on red);
- "outlined": light fill with a dark outline 2–4 px wide on a mid-tone panel;
- "shadowed": light fill with a dark drop shadow offset down-right on a saturated panel;
- "photo_sign": white text on a small saturated panel over a photo (or a strong texture when no photos exist),
  the panel only a few pixels wider than the text, so an OCR box reaches past it.

Units: pixels, RGB 0–255. Deterministic under the seed.

Example:
    >>> s = make_styled_text_scene(3, "light_on_saturated")
    >>> s.style, s.image.shape == s.background.shape, bool((s.alpha > 0.5).any())
    ('light_on_saturated', True, True)
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from costa.synthetic.backgrounds import photo_files, to_uint8
from costa.synthetic.scenes import TextKind, TextScene, make_text_scene, scene_seeds

SIGN_STYLES: tuple[str, ...] = (
    "plain", "light_on_dark", "light_on_saturated", "outlined", "shadowed", "photo_sign",
)  # fmt: skip

_SATURATED: tuple[tuple[int, int, int], ...] = ((200, 22, 30), (25, 60, 170), (20, 130, 60), (225, 110, 20))
_DARK: tuple[tuple[int, int, int], ...] = ((25, 25, 30), (20, 30, 70), (45, 25, 20), (15, 55, 45))
_LIGHT: tuple[tuple[int, int, int], ...] = ((252, 252, 250), (245, 235, 200), (250, 220, 60))
_MID: tuple[tuple[int, int, int], ...] = ((120, 150, 190), (170, 120, 90), (110, 160, 110))


def make_styled_text_scene(seed: int, style: str, *, kind: TextKind = "sign", **options: Any) -> TextScene:
    """Draw the text scene of `seed` in sign `style` (see the module docstring); `options` go to `make_text_scene`.

    Raises:
        ValueError: an unknown style.
    """
    if style not in SIGN_STYLES:
        raise ValueError(f"unknown sign style {style!r}; known: {SIGN_STYLES}")
    if style == "photo_sign":
        options.setdefault("background", "photo" if photo_files() else "texture")
    elif style != "plain":
        options.setdefault("background", "noise")
    base = make_text_scene(seed, kind=kind, **options)
    if style == "plain":
        return replace(base, style="plain")
    rng = np.random.default_rng(scene_seeds(1, seed, f"style-{style}")[0])

    def pick(colours: tuple[tuple[int, int, int], ...]) -> tuple[int, int, int]:
        return colours[int(rng.integers(len(colours)))]

    fill = pick(_LIGHT)
    panel = {"light_on_dark": _DARK, "outlined": _MID}.get(style, _SATURATED)
    panel_rgb = pick(panel)
    if style == "light_on_saturated" and panel_rgb == (225, 110, 20):
        fill = (252, 252, 250)  # yellow on orange is not a sign anyone paints
    size = base.size
    pad = max(3, round(0.12 * size)) if style == "photo_sign" else max(6, round(0.4 * size))
    background = _with_panel(base, panel_rgb, pad)
    alpha = base.alpha
    layers: list[tuple[np.ndarray, tuple[int, int, int]]] = []
    if style == "outlined":
        width = int(np.clip(round(size / 14), 2, 4))
        layers.append((_dilate(alpha, width), (15, 15, 20)))
    if style == "shadowed":
        shift = int(np.clip(round(size / 12), 2, 6))
        layers.append((_shift(alpha, shift, shift), (30, 10, 10)))
    image = background.astype(np.float32)
    coverage = alpha.copy()
    for layer, rgb in layers:
        image += layer[..., None] * (np.asarray(rgb, np.float32) - image)
        coverage = np.maximum(coverage, layer)
    image += alpha[..., None] * (np.asarray(fill, np.float32) - image)
    return replace(base, image=to_uint8(image), background=background, alpha=coverage, colour=fill, style=style)


def styled_text_scenes(
    n: int, seed: int, style: str, kind: TextKind = "sign", stream: str = "", **options: Any
) -> list[TextScene]:
    """`n` scenes in `style`, from the same scene seeds as `scenes.text_scenes(n, seed, kind, stream)`."""
    return [
        make_styled_text_scene(s, style, kind=kind, **options) for s in scene_seeds(n, seed, stream or f"text-{kind}")
    ]


def _with_panel(scene: TextScene, rgb: tuple[int, int, int], pad: int) -> np.ndarray:
    """The scene's background with a panel of colour `rgb` (faint grain, a slight vertical shade) under its text."""
    height, width = scene.alpha.shape
    x1 = max(0, min(line.box.x for line in scene.lines) - pad)
    y1 = max(0, min(line.box.y for line in scene.lines) - pad)
    x2 = min(width, max(line.box.x2 for line in scene.lines) + pad)
    y2 = min(height, max(line.box.y2 for line in scene.lines) + pad)
    rng = np.random.default_rng(x1 * 7919 + y1)
    out = scene.background.astype(np.float32)
    shade = np.linspace(1.04, 0.96, y2 - y1, dtype=np.float32)[:, None, None]
    panel = np.asarray(rgb, np.float32) * shade + rng.normal(0, 2.0, (y2 - y1, x2 - x1, 1)).astype(np.float32)
    out[y1:y2, x1:x2] = panel
    return to_uint8(out)


def _dilate(alpha: np.ndarray, radius: int) -> np.ndarray:
    import cv2

    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))
    return cv2.dilate(alpha, kernel)


def _shift(alpha: np.ndarray, dx: int, dy: int) -> np.ndarray:
    out = np.zeros_like(alpha)
    h, w = alpha.shape
    out[dy:, dx:] = alpha[: h - dy, : w - dx]
    return out
