"""Context features of one subtask, computed offline (before any tool runs) from the image and the user's region.

They are what a subroutine's activation conditions test: how big the target is, how textured its surroundings are,
whether neighbours share its colour, how far the asked colour is from the current one, how many similar blobs
compete for it, how long the target text is. Every feature is a number (a `texture_class` string is derived from
`texture` for people reading traces). Computing them takes a few milliseconds at 256 px.

Units: `region_fraction` is a share of the image area (0–1); `texture` the mean absolute Laplacian of the grey image
(0–255 scale) around the target (or over the whole image for whole-image and text subtasks); `neighbour_similarity`
the share (0–1) of a ring of pixels around the region within ΔE76 15 of the region's median colour; `colour_shift`
the ΔE76 between the region's median colour and the asked colour; `candidates` the number of connected blobs of the
region's colour covering ≥ 0.2 % of the image; `text_length` characters of the subtask's target.

Example:
    >>> import numpy as np
    >>> from costa.types import Box, Subtask
    >>> img = np.full((64, 64, 3), 200, np.uint8); img[20:40, 20:40] = (200, 30, 30)
    >>> f = compute_features(img, Subtask(id="s1", kind="object_removal"), (Box(18, 18, 24, 24),))
    >>> round(f.region_fraction, 3), f.texture_class, f.candidates
    (0.141, 'flat', 1)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from costa.types import Box, Subtask

#: Texture (mean |Laplacian|) above which surroundings count as textured, and below which as flat.
TEXTURED_ABOVE = 6.0
FLAT_BELOW = 1.5
#: Feature names a condition may test (the numeric fields of `ContextFeatures`).
FEATURE_NAMES: tuple[str, ...] = (
    "region_fraction",
    "texture",
    "neighbour_similarity",
    "colour_shift",
    "candidates",
    "text_length",
    "image_pixels",
)


@dataclass(frozen=True)
class ContextFeatures:
    """Typed context of one subtask (see the module docstring for units)."""

    kind: str
    image_pixels: int
    region_fraction: float = 0.0
    texture: float = 0.0
    neighbour_similarity: float = 0.0
    colour_shift: float = 0.0
    candidates: int = 0
    text_length: int = 0
    #: What a VLM said about the context (costa.vlm.VLM_FEATURES labels) when an endpoint is configured; recorded in
    #: traces and shown to the LLM inducer, not tested by conditions (which are numeric).
    labels: tuple[tuple[str, str], ...] = ()

    @property
    def texture_class(self) -> str:
        if self.texture >= TEXTURED_ABOVE:
            return "textured"
        return "flat" if self.texture < FLAT_BELOW else "smooth"

    def value(self, name: str) -> float:
        """The numeric feature `name` (one of `FEATURE_NAMES`)."""
        if name not in FEATURE_NAMES:
            raise KeyError(f"unknown context feature {name!r}; known: {FEATURE_NAMES}")
        return float(getattr(self, name))

    def to_dict(self) -> dict[str, object]:
        d: dict[str, object] = asdict(self) | {"texture_class": self.texture_class}
        d["labels"] = dict(self.labels)
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> ContextFeatures:
        return cls(
            kind=str(data.get("kind", "")),
            image_pixels=int(data.get("image_pixels", 0)),  # type: ignore[call-overload]
            **{n: float(data.get(n, 0.0)) for n in FEATURE_NAMES if n not in ("image_pixels",)},  # type: ignore[arg-type]
            labels=tuple(sorted(dict(data.get("labels") or {}).items())),  # type: ignore[call-overload]
        )


def _lab(image: np.ndarray) -> np.ndarray:
    import cv2

    return cv2.cvtColor(image.astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)


def _texture(grey: np.ndarray, where: np.ndarray | None) -> float:
    import cv2

    lap = np.abs(cv2.Laplacian(grey, cv2.CV_32F, ksize=3))
    values = lap if where is None else lap[where]
    return float(values.mean()) if values.size else 0.0


def compute_features(image: np.ndarray, subtask: Subtask, boxes: Sequence[Box] = ()) -> ContextFeatures:
    """Features of `subtask` on `image` (RGB uint8) with the user's `boxes` (the first one is the target region)."""
    import cv2

    h, w = image.shape[:2]
    grey = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY).astype(np.float32)
    text_length = len((subtask.target or "").strip("'\" "))
    colour = subtask.result if subtask.kind == "object_recoloration" else None
    if not boxes:
        return ContextFeatures(subtask.kind, h * w, texture=_texture(grey, None), text_length=text_length)
    box = boxes[0].clip(w, h)
    inside = box.to_mask(h, w)
    pad = max(4, round(0.25 * max(box.w, box.h)))
    outer = Box(box.x - pad, box.y - pad, box.w + 2 * pad, box.h + 2 * pad).clip(w, h).to_mask(h, w)
    ring = outer & ~inside
    lab = _lab(image)
    # The target's colour: the median of the box's centre, where the object (not its background) is.
    cy, cx, ry, rx = box.y + box.h // 2, box.x + box.w // 2, max(1, box.h // 6), max(1, box.w // 6)
    centre = np.median(lab[cy - ry : cy + ry + 1, cx - rx : cx + rx + 1].reshape(-1, 3), axis=0)
    near = np.linalg.norm(lab - centre, axis=2) < 15.0
    similarity = float(near[ring].mean()) if ring.any() else 0.0
    n, _, stats, _ = cv2.connectedComponentsWithStats(near.astype(np.uint8), connectivity=8)
    candidates = int(sum(1 for i in range(1, n) if stats[i, cv2.CC_STAT_AREA] >= 0.002 * h * w))
    shift = 0.0
    if colour:
        from costa.colours import parse_colour

        rgb = parse_colour(colour)
        if rgb is not None:
            want = _lab(np.array([[rgb]], np.uint8))[0, 0]
            shift = float(np.linalg.norm(want - centre))
    return ContextFeatures(
        kind=subtask.kind,
        image_pixels=h * w,
        region_fraction=float(inside.mean()),
        texture=_texture(grey, ring if ring.any() else None),
        neighbour_similarity=similarity,
        colour_shift=shift,
        candidates=candidates,
        text_length=text_length,
    )
