"""Two same-coloured shaded objects on one background, left and right (a target and a distractor of the same
colour), and the shading-keeping LAB recolour that is a right recolouring of one of them: the scenes and the true edit
of the checks' false-pass cases (`costa.synthetic.cases_checks`).

Example:
    >>> s = two_object_scene(3)
    >>> s.phrase.startswith("the "), bool((s.target_mask & s.other_mask).any())
    (True, False)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from costa.synthetic.backgrounds import random_background
from costa.synthetic.scenes import OBJECT_COLOURS


@dataclass(frozen=True, eq=False)
class TwoObjectScene:
    """Two shaded objects of one colour, left and right; `target` (0 left, 1 right) is the one the subtask names."""

    image: np.ndarray
    background: np.ndarray
    masks: tuple[np.ndarray, np.ndarray]
    colour_name: str
    background_kind: str
    target: int

    @property
    def phrase(self) -> str:
        side = ("left", "right")[self.target]
        return f"the {self.colour_name} object on the {side}"

    @property
    def target_mask(self) -> np.ndarray:
        return self.masks[self.target]

    @property
    def other_mask(self) -> np.ndarray:
        return self.masks[1 - self.target]


def two_object_scene(seed: int, background: str | None = None) -> TwoObjectScene:
    """Paint two same-coloured shaded ellipses, one in each half of a random background (240–320 × 320–448 px)."""
    rng = np.random.default_rng(seed)
    height, width = int(rng.integers(30, 41)) * 8, int(rng.integers(40, 57)) * 8
    kinds = ("flat", "gradient", "noise", "texture")
    bg_kind = background or kinds[int(rng.integers(len(kinds)))]
    bg = random_background(bg_kind, height, width, rng, light=bool(rng.random() < 0.5))
    name, rgb = OBJECT_COLOURS[int(rng.integers(len(OBJECT_COLOURS)))]
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    image = bg.copy()
    masks = []
    for half in (0, 1):
        rx = float(rng.uniform(0.09, 0.17)) * width
        ry = float(rng.uniform(0.14, 0.3)) * height
        cx = (0.25 + 0.5 * half) * width + float(rng.uniform(-0.04, 0.04)) * width
        cy = float(rng.uniform(0.4, 0.6)) * height
        mask = ((xx - cx) / rx) ** 2 + ((yy - cy) / ry) ** 2 <= 1.0
        u = ((xx - cx) / rx + (yy - cy) / ry) / 2.0
        shade = np.clip(0.85 - 0.3 * u, 0.55, 1.15)[..., None]
        grain = rng.normal(0.0, 2.0, (height, width, 3)).astype(np.float32)
        obj = np.clip(np.asarray(rgb, np.float32) * shade + grain, 0, 255)
        image[mask] = np.rint(obj[mask]).astype(np.uint8)
        masks.append(mask)
    return TwoObjectScene(image, bg, (masks[0], masks[1]), name, bg_kind, int(rng.integers(2)))


def recolour_lab(image: np.ndarray, mask: np.ndarray, rgb: tuple[int, int, int]) -> np.ndarray:
    """Recolour `mask` to `rgb` keeping shading: CIELAB a*, b* set to the target's, L* shifted to the target's mean."""
    import cv2

    lab = cv2.cvtColor(image.astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)
    target = cv2.cvtColor(np.array([[rgb]], np.float32) / 255.0, cv2.COLOR_RGB2Lab)[0, 0]
    out = lab.copy()
    if mask.any():
        light = lab[..., 0][mask]
        out[..., 0][mask] = np.clip(light - light.mean() + target[0], 0, 100)
        out[..., 1][mask] = target[1]
        out[..., 2][mask] = target[2]
    rgb_out = cv2.cvtColor(out, cv2.COLOR_Lab2RGB)
    result = np.clip(np.rint(rgb_out * 255.0), 0, 255).astype(np.uint8)
    keep = image.copy()
    keep[mask] = result[mask]
    return keep
