"""The real photos of the real-photo suite, their hand-made object cut-outs and the fixed held-out part.

`tests/data/real/photos.yaml` lists every photo (scikit-image's bundled data, EditEval's Unsplash photos and
MagicBrush's COCO sources under `COSTA_BENCHMARKS_DIR`), its licence source and its part ("dev" or "held_out", fixed
before anything was tuned); `tests/data/real/objects.yaml` the objects cut out of them (a hand-written polygon,
refined at the edge and committed as `masks/<id>.png`). Photos are read at `SIDE` pixels on the long side, the size
the polygons and masks were made at. Nothing is downloaded: a photo under the benchmarks folder is simply absent
when the folder is.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import yaml

DATA_DIR = Path(__file__).resolve().parents[2] / "tests" / "data" / "real"
#: Long side, in pixels, every photo is read at (polygons and masks are in these pixels).
SIDE = 512
Part = Literal["dev", "held_out"]
PARTS: tuple[Part, ...] = ("dev", "held_out")


@dataclass(frozen=True)
class Photo:
    """One real photo: `source` is "skimage", "editeval" or "magicbrush"; `file` a scikit-image data name or a path
    under the benchmarks folder."""

    id: str
    source: str
    file: str
    part: Part


@dataclass(frozen=True)
class CutOut:
    """A real object cut out of a real photo: its RGB pixels and bool mask, cropped to the mask's box."""

    id: str
    photo: str
    name: str
    height: tuple[float, float]  # share of a background's height it is pasted at (min, max)
    part: Part
    rgb: np.ndarray
    mask: np.ndarray


def benchmarks_dir() -> Path | None:
    """`COSTA_BENCHMARKS_DIR` when set (bench/cli.py sets it from ../shared/benchmarks), else None."""
    env = os.environ.get("COSTA_BENCHMARKS_DIR")
    return Path(env) if env and Path(env).is_dir() else None


@functools.lru_cache(maxsize=1)
def photos() -> tuple[Photo, ...]:
    """Every photo of the suite, available or not, in the file's order."""
    doc = yaml.safe_load((DATA_DIR / "photos.yaml").read_text(encoding="utf-8"))
    out = []
    for row in doc["photos"]:
        if row["part"] not in PARTS:
            raise ValueError(f"photos.yaml: photo {row['id']!r} has part {row['part']!r}; expected dev or held_out")
        out.append(Photo(str(row["id"]), str(row["source"]), str(row["file"]), row["part"]))
    return tuple(out)


def photo(photo_id: str) -> Photo:
    for p in photos():
        if p.id == photo_id:
            return p
    raise KeyError(f"no real photo {photo_id!r} in photos.yaml")


def available(p: Photo) -> bool:
    """Whether the photo's pixels are here (scikit-image's always are; the others need the benchmarks folder)."""
    if p.source == "skimage":
        return True
    root = benchmarks_dir()
    return root is not None and (root / p.file).is_file()


def load_photo(photo_id: str, side: int = SIDE) -> np.ndarray:
    """The photo as (H, W, 3) uint8, resized (area filter) so its long side is `side` pixels.

    Raises:
        FileNotFoundError: the photo lives under the benchmarks folder and that folder is absent.
    """
    return _load(photo_id, side).copy()


@functools.lru_cache(maxsize=64)
def _load(photo_id: str, side: int) -> np.ndarray:
    import cv2

    p = photo(photo_id)
    if p.source == "skimage":
        import skimage.data

        image = skimage.data.stereo_motorcycle()[0] if p.file == "motorcycle_left" else getattr(skimage.data, p.file)()
    else:
        root = benchmarks_dir()
        if root is None or not (root / p.file).is_file():
            raise FileNotFoundError(f"real photo {photo_id} needs {p.file} under COSTA_BENCHMARKS_DIR")
        from PIL import Image, ImageOps

        with Image.open(root / p.file) as im:
            image = np.asarray(ImageOps.exif_transpose(im).convert("RGB"))
    if image.ndim == 2:
        image = np.stack([image] * 3, axis=-1)
    image = np.ascontiguousarray(image[..., :3]).astype(np.uint8)
    h, w = image.shape[:2]
    scale = side / max(h, w)
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC
    out = cv2.resize(image, size, interpolation=interp)
    out.setflags(write=False)
    return out


@functools.lru_cache(maxsize=1)
def _object_rows() -> tuple[dict[str, object], ...]:
    doc = yaml.safe_load((DATA_DIR / "objects.yaml").read_text(encoding="utf-8"))
    return tuple(doc["objects"])


def object_ids() -> tuple[str, ...]:
    return tuple(str(r["id"]) for r in _object_rows())


def polygon_mask(polygon: list[list[float]], shape: tuple[int, int]) -> np.ndarray:
    """The filled polygon (pixel coordinates) as a bool mask of `shape` (height, width)."""
    import cv2

    m = np.zeros(shape, np.uint8)
    cv2.fillPoly(m, [np.rint(np.asarray(polygon, np.float64)).astype(np.int32)], 1)
    return m.astype(bool)


def load_cutout(object_id: str) -> CutOut | None:
    """The object's pixels and committed mask cropped to its box; None when its photo is not available here."""
    row = next((r for r in _object_rows() if r["id"] == object_id), None)
    if row is None:
        raise KeyError(f"no real object {object_id!r} in objects.yaml")
    p = photo(str(row["photo"]))
    if not available(p):
        return None
    from PIL import Image

    image = load_photo(p.id)
    with Image.open(DATA_DIR / "masks" / f"{object_id}.png") as im:
        mask = np.asarray(im.convert("L")) > 127
    if mask.shape != image.shape[:2]:
        raise ValueError(f"masks/{object_id}.png is {mask.shape} but photo {p.id} reads as {image.shape[:2]}")
    ys, xs = np.nonzero(mask)
    y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
    lo, hi = (float(v) for v in row["height"])  # type: ignore[attr-defined]
    return CutOut(
        object_id, p.id, str(row["name"]), (lo, hi), p.part, image[y0:y1, x0:x1].copy(), mask[y0:y1, x0:x1].copy()
    )


def refine_polygon(image: np.ndarray, polygon: list[list[float]], band_px: int = 6) -> np.ndarray:
    """Refine a hand-written polygon at its edge: GrabCut decides only within `band_px` of the outline.

    Used once to make the committed masks (then looked at); pixels deeper inside stay object, farther out
    background, so the refinement can move the outline by at most `band_px`.
    """
    import cv2

    poly = polygon_mask(polygon, image.shape[:2]).astype(np.uint8)
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * band_px + 1, 2 * band_px + 1))
    inner, outer = cv2.erode(poly, k), cv2.dilate(poly, k)
    gc = np.full(poly.shape, cv2.GC_BGD, np.uint8)
    gc[outer > 0] = cv2.GC_PR_BGD
    gc[poly > 0] = cv2.GC_PR_FGD
    gc[inner > 0] = cv2.GC_FGD
    bgd, fgd = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
    cv2.setRNGSeed(0)
    cv2.grabCut(np.ascontiguousarray(image[..., ::-1]), gc, None, bgd, fgd, 5, cv2.GC_INIT_WITH_MASK)  # type: ignore[call-overload]
    out = (gc == cv2.GC_FGD) | (gc == cv2.GC_PR_FGD)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(out.astype(np.uint8), connectivity=8)
    if n > 2:  # keep the largest part: a stray speck in the band is not the object
        out = labels == 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    return out
