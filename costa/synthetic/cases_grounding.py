"""Benchmark cases for the grounding tools and the subtasks they serve: faces, people, clicks.

- **Face scenes**: real faces on synthetic backgrounds — the 100 aligned LFW faces that scikit-image ships
  (`skimage.data.lfw_subset`, 25×25 grey) enlarged to 64–128 px, skin-tinted and pasted on a flat, gradient, noise,
  texture or photo background (ground truth: the pasted square) — and, one case in four, a random crop, scale and
  mirroring of a real portrait with a hand-checked face box: scikit-image's astronaut (always shipped) and EditEval's
  background_change/4 (when ../shared/benchmarks is present). Drawn faces do not trigger a Haar cascade reliably,
  which is why real ones are used.
- **People scenes**: one standing or walking figure (head, torso, arms, legs in skin, shirt and trouser colours with
  side lighting) 130 px tall or more, with a margin of 15 % of its height from the borders, on the same backgrounds;
  ground truth: its exact mask and box. The HOG detector finds about two in three — its measured rate.
- **Clicks**: a user's click is the object's most interior pixel (farthest from its outline).

Cases are `GroundingCase`s (a `BenchCase` with the scene's `source`), so the tools benchmark scores their
intermediate boxes and masks by what the subtask needs (`score_grounding`): a privacy region or a detection must
cover the truth; a subject mask must match it.

Example:
    >>> cs = make_grounding_cases("privacy_blur", 2, seed=0)
    >>> [c.subtask.kind for c in cs], cs[0].subtask.target
    (['privacy_blur', 'privacy_blur'], 'the faces')
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from costa.synthetic.backgrounds import benchmarks_dir, photo_files, pick_background, random_background, to_uint8
from costa.synthetic.case import BenchCase, mask_iou
from costa.synthetic.scenes import ObjectScene, scene_seeds
from costa.types import Box, Point, Subtask

#: Subtask kinds whose cases come from here (see `costa.synthetic.cases.GROUNDING_KINDS`).
FACE_KINDS = frozenset({"privacy_blur", "object_detection"})
PEOPLE_KINDS = frozenset({"background_removal", "background_blur"})
#: Kinds that keep a subject and change everything else: scored by the subject's IoU with the truth.
SUBJECT_KINDS = PEOPLE_KINDS
#: Share of face cases drawn from real portraits rather than LFW faces on synthetic backgrounds.
PHOTO_FACE_SHARE = 0.25
#: A region or boxes must cover this share of the true object, without exceeding `MAX_COVER_GROWTH` times its box.
MIN_COVERAGE = 0.9
MAX_COVER_GROWTH = 4.0
#: …or overlap its box by this IoU.
MIN_BOX_IOU = 0.5
#: Mask IoU a subject mask needs (as for segmentation in the tools benchmark).
MIN_SUBJECT_IOU = 0.8
#: Skin tones (RGB) multiplied into the grey LFW faces.
SKIN_TONES: tuple[tuple[int, int, int], ...] = ((241, 194, 160), (224, 172, 140), (198, 134, 100), (141, 85, 54))

#: Real portraits: (path relative to ../shared/benchmarks, or "skimage:astronaut"), face box x, y, w, h in pixels.
PORTRAITS: tuple[tuple[str, tuple[int, int, int, int]], ...] = (
    ("skimage:astronaut", (177, 66, 95, 95)),
    ("editeval_v1/images/background_change/4.jpg", (108, 342, 271, 271)),
)


@dataclass(frozen=True, eq=False)
class GroundingCase(BenchCase):
    """A benchmark case from this module; `source` is "lfw face", "portrait", "person" or "object"."""

    source: str = ""


# ------------------------------------------------------------------------------------------------------- faces


@functools.cache
def _lfw_faces() -> np.ndarray:
    """The 100 LFW faces scikit-image ships, uint8 (100, 25, 25)."""
    from skimage.data import lfw_subset

    return np.clip(np.rint(lfw_subset()[:100] * 255.0), 0, 255).astype(np.uint8)


def _scene_from(image: np.ndarray, background: np.ndarray, mask: np.ndarray, kind: str, shape: str) -> ObjectScene:
    ys, xs = np.nonzero(mask)
    box = Box(int(xs.min()), int(ys.min()), int(np.ptp(xs)) + 1, int(np.ptp(ys)) + 1, label=shape)
    return ObjectScene(image, background, mask, box, shape=shape, background_kind=kind)


def lfw_face_scene(seed: int, photos: tuple[Path, ...] = ()) -> ObjectScene:
    """One LFW face (64–128 px, skin-tinted) at a random place on a random background; truth = the pasted square."""
    import cv2

    rng = np.random.default_rng(seed)
    faces = _lfw_faces()
    height, width = int(rng.integers(240, 401)), int(rng.integers(320, 561))
    kind = pick_background(rng, None, photos)
    background = random_background(kind, height, width, rng, light=bool(rng.random() < 0.5), photos=photos)
    side = int(rng.integers(64, 129))
    grey = cv2.resize(faces[int(rng.integers(len(faces)))], (side, side), interpolation=cv2.INTER_CUBIC)
    tone = np.asarray(SKIN_TONES[int(rng.integers(len(SKIN_TONES)))], np.float32) / 255.0
    face = to_uint8(grey.astype(np.float32)[..., None] * tone[None, None, :] * 1.15)
    if rng.random() < 0.5:
        face = face[:, ::-1]
    margin = side // 4
    x = int(rng.integers(margin, width - side - margin))
    y = int(rng.integers(margin, height - side - margin))
    image = background.copy()
    image[y : y + side, x : x + side] = face
    mask = np.zeros((height, width), dtype=bool)
    mask[y : y + side, x : x + side] = True
    return _scene_from(image, background, mask, kind, "face")


def _portrait(source: str) -> np.ndarray | None:
    if source.startswith("skimage:"):
        from skimage import data

        return np.ascontiguousarray(getattr(data, source.split(":", 1)[1])())
    root = benchmarks_dir()
    path = root / source if root is not None else None
    if path is None or not path.is_file():
        return None
    from costa.images import load_image

    return load_image(path)


def portrait_scene(seed: int) -> ObjectScene | None:
    """A random crop (the face kept whole), scale (face 60–160 px) and mirroring of a real portrait; None when no
    portrait is available. There is no face-free background for it, so `background` is the image itself."""
    import cv2

    rng = np.random.default_rng(seed)
    available = [(s, b) for s, b in PORTRAITS if _portrait(s) is not None]
    if not available:
        return None
    source, (bx, by, bw, bh) = available[int(rng.integers(len(available)))]
    image = _portrait(source)
    assert image is not None
    h, w = image.shape[:2]
    scale = float(rng.uniform(60, 160)) / bw
    crop_w = min(w, max(bw + 8, round(rng.uniform(2.2, 4.0) * bw)))
    crop_h = min(h, max(bh + 8, round(crop_w * rng.uniform(0.7, 1.0))))
    x1 = int(rng.integers(max(0, bx + bw - crop_w), min(bx, w - crop_w) + 1))
    y1 = int(rng.integers(max(0, by + bh - crop_h), min(by, h - crop_h) + 1))
    crop = image[y1 : y1 + crop_h, x1 : x1 + crop_w]
    size = (max(32, round(crop_w * scale)), max(32, round(crop_h * scale)))
    out = cv2.resize(crop, size, interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC)
    fx, fy = size[0] / crop_w, size[1] / crop_h
    mask = np.zeros(out.shape[:2], dtype=bool)
    mx1, my1 = round((bx - x1) * fx), round((by - y1) * fy)
    mask[my1 : my1 + round(bh * fy), mx1 : mx1 + round(bw * fx)] = True
    if rng.random() < 0.5:
        out, mask = np.ascontiguousarray(out[:, ::-1]), np.ascontiguousarray(mask[:, ::-1])
    return _scene_from(out, out, mask, "portrait", "face")


def face_scenes(n: int, seed: int = 0, stream: str = "faces") -> list[tuple[ObjectScene, str]]:
    """`n` face scenes with their source ("lfw face" or "portrait")."""
    photos = photo_files()
    out = []
    for i, s in enumerate(scene_seeds(n, seed, stream)):
        portrait = portrait_scene(s) if (i % round(1 / PHOTO_FACE_SHARE)) == 3 else None
        out.append((portrait, "portrait") if portrait is not None else (lfw_face_scene(s, photos), "lfw face"))
    return out


# ------------------------------------------------------------------------------------------------------ people


def _figure(height: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A standing figure `height` px tall: (bool mask, part map 0 hair, 1 skin, 2 shirt, 3 trousers) on its canvas."""
    from PIL import Image, ImageDraw

    h = float(height)
    canvas = (int(h * 0.6), height + 4)
    parts = Image.new("L", canvas, 255)
    d = ImageDraw.Draw(parts)
    cx, top = canvas[0] / 2.0, 2.0
    head_h, head_w = h * 0.13, h * 0.13 * 0.78
    neck_y = top + head_h * 0.95
    shoulder, waist, hip_y = h * 0.11, h * 0.085, top + h * 0.53
    sy = neck_y + h * 0.035
    arm, leg = max(2, int(h * 0.045)), max(2, int(h * 0.065))
    stride = float(rng.uniform(0.03, 0.12))
    for s in (-1, 1):  # legs (trousers) first, so the torso overlaps their tops
        x1, y1 = cx + s * stride * h, top + h - leg * 0.4
        d.line([(cx + s * waist * 0.5, hip_y - leg * 0.3), (x1, y1)], fill=3, width=leg)
        d.ellipse([x1 - leg * 0.9, y1 - leg * 0.4, x1 + leg * 0.9 + s * leg * 0.5, y1 + leg * 0.6], fill=3)
    d.polygon([(cx - shoulder, sy), (cx + shoulder, sy), (cx + waist, hip_y), (cx - waist, hip_y)], fill=2)
    for s in (-1, 1):
        d.ellipse([cx + s * shoulder - h * 0.03, sy - h * 0.01, cx + s * shoulder + h * 0.03, sy + h * 0.05], fill=2)
        swing = float(rng.uniform(-0.04, 0.06))
        x1, y1 = cx + s * (shoulder + h * 0.01) + swing * h, sy + h * 0.36
        d.line([(cx + s * (shoulder - arm * 0.3), sy + arm * 0.5), (x1, y1)], fill=2, width=arm)
        d.ellipse([x1 - arm * 0.6, y1 - arm * 0.6, x1 + arm * 0.6, y1 + arm * 0.6], fill=1)
    d.rectangle([cx - h * 0.03, neck_y - 2, cx + h * 0.03, neck_y + h * 0.04], fill=1)
    d.ellipse([cx - head_w / 2, top, cx + head_w / 2, top + head_h], fill=1)
    d.chord([cx - head_w / 2, top, cx + head_w / 2, top + head_h * 0.7], 180, 360, fill=0)
    part_map = np.asarray(parts)
    return part_map < 255, part_map


def person_scene(seed: int, photos: tuple[Path, ...] = ()) -> ObjectScene:
    """One figure on a random background; truth = its exact mask and box; `background` is the scene without it."""
    rng = np.random.default_rng(seed)
    height, width = int(rng.integers(300, 421)), int(rng.integers(400, 561))
    kind = pick_background(rng, None, photos)
    background = random_background(kind, height, width, rng, light=bool(rng.random() < 0.5), photos=photos)
    tall = int(rng.integers(130, int(height / 1.35) + 1))
    mask_local, part_map = _figure(tall, rng)
    margin = int(0.15 * tall)
    ph, pw = mask_local.shape
    y = int(rng.integers(margin, max(margin + 1, height - ph - margin)))
    x = int(rng.integers(margin, max(margin + 1, width - pw - margin)))
    colours = np.stack(
        [
            np.full(3, rng.uniform(10, 90)),
            np.asarray(SKIN_TONES[int(rng.integers(len(SKIN_TONES)))], np.float64),
            rng.uniform(20, 235, 3),
            rng.uniform(15, 140, 3),
        ]
    ).astype(np.float32)
    side = np.linspace(-1.0, 1.0, pw, dtype=np.float32)[None, :, None]
    light = np.clip(1.0 + 0.18 * side * float(rng.choice([-1.0, 1.0])), 0.6, 1.2)
    figure = colours[np.minimum(part_map, 3)] * light
    image = background.astype(np.float32)
    region = image[y : y + ph, x : x + pw]
    region[mask_local] = figure[mask_local]
    image += rng.normal(0.0, 2.0, image.shape).astype(np.float32)
    mask = np.zeros((height, width), dtype=bool)
    mask[y : y + ph, x : x + pw] = mask_local
    image = to_uint8(image)
    image[~mask] = background[~mask]  # grain only on the figure: the background stays the true background
    return _scene_from(image, background, mask, kind, "person")


def people_scenes(n: int, seed: int = 0, stream: str = "people") -> list[ObjectScene]:
    photos = photo_files()
    return [person_scene(s, photos) for s in scene_seeds(n, seed, stream)]


# ------------------------------------------------------------------------------------------------------- cases


def make_grounding_cases(kind: str, n: int, seed: int = 0) -> list[BenchCase]:
    """Cases for a kind served by face or people scenes (`FACE_KINDS`, `PEOPLE_KINDS`).

    Raises:
        ValueError: `kind` has no grounding cases.
    """
    if kind in FACE_KINDS:
        target = "the faces" if kind == "privacy_blur" else "faces"
        return [
            GroundingCase(Subtask(id="s1", kind=kind, target=target), obj=scene, source=source)
            for scene, source in face_scenes(n, seed, stream=f"faces-{kind}")
        ]
    if kind in PEOPLE_KINDS:
        return people_cases(kind, n, seed, target=None)
    raise ValueError(f"no grounding cases for subtask {kind!r}")


def people_cases(kind: str, n: int, seed: int = 0, target: str | None = "the person") -> list[BenchCase]:
    """Cases of `kind` over people scenes (the people detector's cases for every subtask it serves)."""
    return [
        GroundingCase(Subtask(id="s1", kind=kind, target=target), obj=scene, source="person")
        for scene in people_scenes(n, seed, stream=f"people-{kind}")
    ]


def tool_cases(tool_id: str, kind: str, n: int, seed: int = 0) -> list[BenchCase] | None:
    """Cases a tool is measured on instead of the kind's shared ones, or None for the shared ones.

    The people detector serves only people, so it is measured on people scenes for every subtask it serves.
    """
    if tool_id == "hog_people":
        return people_cases(kind, n, seed, target=None if kind in SUBJECT_KINDS else "the person")
    return None


def click_points(case: BenchCase) -> tuple[Point, ...]:
    """The user's clicks for a case: a positive click on the object's most interior pixel; for a person, one in each
    third of the figure's height (head, body, legs), as people click on a tall object's parts."""
    import cv2

    if case.obj is None:
        raise ValueError("a click needs an object case")
    mask = case.obj.mask
    inside = np.pad(mask, 1).astype(np.uint8)
    dist = cv2.distanceTransform(inside, cv2.DIST_L2, 5)[1:-1, 1:-1]
    bands = [(0, mask.shape[0])]
    if getattr(case, "source", "") == "person":
        box = case.obj.box
        edges = [box.y + round(k * box.h / 3) for k in range(4)]
        bands = list(itertools.pairwise(edges))
    clicks = []
    for top, bottom in bands:
        band = dist[top:bottom]
        y, x = np.unravel_index(int(np.argmax(band)), band.shape)
        clicks.append(Point(int(x), int(y) + top))
    return tuple(clicks)


# ----------------------------------------------------------------------------------------------------- scoring


def coverage(case: BenchCase, region: np.ndarray) -> tuple[float, float]:
    """(share of the true object inside `region`, `region`'s area ÷ the true object's box area)."""
    assert case.obj is not None
    truth = case.obj.mask
    box = case.obj.box
    return float(region[truth].mean()), float(region.sum()) / float(box.w * box.h)


def score_grounding(
    ctx: Any, kind_spec: Any, case: BenchCase, tool_spec: Any, before: Any, output: Any
) -> tuple[float, str | None, str, float | None]:
    """Score a tool's output on a `GroundingCase`: (quality, failure or None, truth name, truth value).

    A step that finishes the subtask is scored by `check_step`, as the search scores it. An intermediate step is
    scored against the truth: boxes or a privacy region must overlap the object's box by IoU ≥ 0.5 (the usual
    detection criterion), or cover ≥ 90 % of the object without spreading past four times its box (a detector window
    with margins); a subject mask (for background removal) needs IoU ≥ 0.8.
    """
    from costa.checks import check_step
    from costa.errors import ToolError
    from costa.masks import union_masks

    assert case.obj is not None
    shape = case.obj.mask.shape
    masks, boxes = output.artifacts.get("masks"), output.artifacts.get("boxes")
    if kind_spec.produces in tool_spec.outputs:
        after = before.with_output(output)
        try:
            verdict = check_step(ctx, kind_spec, case.subtask, tool_spec.outputs, before, after, output)
            quality, reasons = verdict.quality, verdict.reasons
        except ToolError as e:
            quality, reasons = 0.0, (f"check could not run: {e}",)
        truth_name, truth = "", None
        if boxes:
            truth_name, truth = "object coverage", coverage(case, _boxes_mask(boxes, shape))[0]
        elif output.edited_region is not None and kind_spec.id in SUBJECT_KINDS:
            truth_name, truth = "subject IoU", mask_iou(~output.edited_region, case.obj.mask)
        elif output.edited_region is not None:
            truth_name, truth = "object coverage", coverage(case, output.edited_region)[0]
        return quality, None if quality >= 0.8 else "; ".join(reasons), truth_name, truth
    if boxes:
        region, what = _boxes_mask(boxes, shape), "boxes"
    elif masks:
        region, what = union_masks(masks, *shape), "masks"
    else:
        raise ValueError(f"no ground-truth measure for {tool_spec.id!r} (outputs {tool_spec.outputs})")
    if kind_spec.id in SUBJECT_KINDS and what == "masks":
        iou = mask_iou(region, case.obj.mask)
        ok = iou >= MIN_SUBJECT_IOU
        return float(ok), None if ok else f"subject mask IoU {iou:.2f} < {MIN_SUBJECT_IOU}", "mask IoU", iou
    covered, growth = coverage(case, region)
    box_overlap = mask_iou(region, case.obj.box.to_mask(*shape))
    ok = box_overlap >= MIN_BOX_IOU or (covered >= MIN_COVERAGE and growth <= MAX_COVER_GROWTH)
    failure = (
        None
        if ok
        else f"{what} cover {covered:.0%} of the object at {growth:.1f}× its box (IoU with its box {box_overlap:.2f})"
    )
    return float(ok), failure, "object coverage", covered


def _boxes_mask(boxes: Any, shape: tuple[int, int]) -> np.ndarray:
    out = np.zeros(shape, dtype=bool)
    for b in boxes:
        out |= b.to_mask(*shape)
    return out


def iou_summary(values: list[float]) -> str:
    """ "median 0.93, mean 0.88, ≥0.8 in 45/50" for a list of IoUs."""
    if not values:
        return "no values"
    ordered = sorted(values)
    mid = len(ordered) // 2
    median = ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2.0
    good = sum(v >= 0.8 for v in values)
    return f"median {median:.2f}, mean {math.fsum(values) / len(values):.2f}, ≥0.8 in {good}/{len(values)}"
