"""Benchmark cases for the whole-image subtasks (upscaling, deblurring, outpainting, global adjustment), each with
the ideal result where one exists.

Every case starts from a synthetic text or object scene (`costa.synthetic.scenes`, alternating) and derives its input
from it, so the scene itself is the truth:

- **upscaling**: the scene shrunk by 2, 3 or 4 (area averaging) is the input; the scene is the true high-resolution
  image. Inputs are 60–240 px a side (what people upscale), so Real-ESRGAN's seconds stay measurable in a run.
- **deblurring**: the scene blurred by a Gaussian of σ 1–2.5 px plus noise of σ 0.5–2 levels is the input; the
  scene is the sharp truth.
- **outpainting**: a centred crop of the scene is the input and the request is drawn from aspect ratios ("16:9",
  "4:3", "1:1"), growths ("50%"), directions (left, right, top, bottom, all) and the default; the scene around the
  crop is the true border.
- **cropping**: the scene is the input and the request an aspect ratio ("square", "16:9"…) or none (trim the
  edges); only the check scores it (it demands the exact source pixels and the asked aspect).
- **global adjustment**: the scene is the input; the request is drawn from the adjustment words with degrees. There
  is no single true result (how much brighter is a matter of taste), so only the check scores it.

`image_truth` measures an output against the case's truth (PSNR in dB, over the new border for outpainting).

Example:
    >>> cs = make_image_cases("image_upscaling", 2, seed=0)
    >>> cs[0].subtask.kind, cs[0].truth.shape[0] > cs[0].image.shape[0]
    ('image_upscaling', True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from costa.errors import ToolError
from costa.imagestats import psnr
from costa.synthetic.case import BenchCase
from costa.synthetic.scenes import object_scenes, scene_seeds, text_scenes
from costa.types import Subtask

#: Subtask kinds with whole-image cases.
IMAGE_CASE_KINDS = frozenset(
    {"image_upscaling", "image_deblurring", "outpainting", "global_adjustment", "image_cropping"}
)
CROP_REQUESTS = (None, "square", "16:9", "4:3", "portrait", "1:1", "3:2")

UPSCALE_FACTORS = ("2", "2x", "3", "4x", "x2", "4")
OUTPAINT_REQUESTS: tuple[tuple[str | None, dict[str, str]], ...] = (
    (None, {}),
    ("16:9", {}),
    ("4:3", {}),
    ("1:1", {}),
    ("50%", {}),
    (None, {"direction": "left"}),
    (None, {"direction": "right"}),
    (None, {"direction": "top"}),
    (None, {"direction": "bottom"}),
    ("30%", {"direction": "all sides"}),
    ("wider", {}),
)
ADJUSTMENTS = (
    "brighter", "darker", "more contrast", "less contrast", "more saturated", "less saturated", "warmer", "cooler",
    "grayscale", "sepia", "slightly brighter", "much darker", "a bit warmer", "much less saturated", "brighter by 30%",
)  # fmt: skip


@dataclass(frozen=True, eq=False)
class ImageCase(BenchCase):
    """A whole-image case: `source` is the input image, `truth` the ideal output when one exists (the high-resolution
    scene, the sharp scene, the scene around the crop), `origin` where the input sits in `truth` for outpainting."""

    source: np.ndarray | None = None
    truth: np.ndarray | None = None
    origin: tuple[int, int] = (0, 0)
    note: str = ""

    @property
    def image(self) -> np.ndarray:
        assert self.source is not None  # every image case is built with its input
        return self.source


def _scenes(n: int, seed: int, stream: str) -> list[np.ndarray]:
    """`n` scene images alternating object and text scenes (half of each, object first)."""
    objects = object_scenes((n + 1) // 2, seed, stream=f"{stream}-objects")
    texts = text_scenes(n // 2, seed, stream=f"{stream}-text")
    out: list[np.ndarray] = []
    for i in range(n):
        out.append(objects[i // 2].image if i % 2 == 0 else texts[i // 2].image)
    return out


def _shrink(image: np.ndarray, factor: int) -> tuple[np.ndarray, np.ndarray]:
    """(input shrunk by `factor`, the image cropped to a multiple of it)."""
    import cv2

    h, w = image.shape[:2]
    h, w = h - h % factor, w - w % factor
    truth = np.ascontiguousarray(image[:h, :w])
    return cv2.resize(truth, (w // factor, h // factor), interpolation=cv2.INTER_AREA), truth


def _upscale_case(image: np.ndarray, rng: np.random.Generator) -> ImageCase:
    result = UPSCALE_FACTORS[int(rng.integers(len(UPSCALE_FACTORS)))]
    factor = int(result.strip("x"))
    small, truth = _shrink(image, factor)
    subtask = Subtask(id="s1", kind="image_upscaling", result=result)
    return ImageCase(subtask, source=small, truth=truth, note=f"×{factor} of {small.shape[1]}x{small.shape[0]}")


def _deblur_case(image: np.ndarray, rng: np.random.Generator) -> ImageCase:
    import cv2

    sigma = float(rng.uniform(1.0, 2.5))
    noise = float(rng.uniform(0.5, 2.0))
    blurred = cv2.GaussianBlur(image.astype(np.float32), (0, 0), sigma)
    blurred += np.asarray(rng.normal(0.0, noise, blurred.shape), dtype=np.float32)
    source = np.clip(np.rint(blurred), 0, 255).astype(np.uint8)
    subtask = Subtask(id="s1", kind="image_deblurring")
    return ImageCase(subtask, source=source, truth=image, note=f"blur σ {sigma:.2f}, noise σ {noise:.2f}")


def _outpaint_case(image: np.ndarray, rng: np.random.Generator) -> ImageCase:
    from costa.tools.outpaint import outpaint_margins

    height, width = image.shape[:2]
    order = rng.permutation(len(OUTPAINT_REQUESTS))
    for k in order:
        result, params = OUTPAINT_REQUESTS[int(k)]
        for share in (0.62, 0.5, 0.4, 0.3):
            h, w = max(16, round(height * share)), max(16, round(width * share))
            try:
                m = outpaint_margins(h, w, result, params)
            except ToolError:
                break  # e.g. the crop already has this aspect: draw another request
            new_h, new_w = m.new_size(h, w)
            if new_h <= height and new_w <= width:
                y0, x0 = (height - new_h) // 2, (width - new_w) // 2
                truth = np.ascontiguousarray(image[y0 : y0 + new_h, x0 : x0 + new_w])
                source = np.ascontiguousarray(truth[m.top : m.top + h, m.left : m.left + w])
                subtask = Subtask(id="s1", kind="outpainting", result=result, params=dict(params))
                return ImageCase(subtask, source=source, truth=truth, origin=(m.left, m.top), note=f"{w}x{h}")
    raise ValueError("no outpainting request fits this scene")  # never with the requests above


def _adjust_case(image: np.ndarray, rng: np.random.Generator) -> ImageCase:
    result = ADJUSTMENTS[int(rng.integers(len(ADJUSTMENTS)))]
    return ImageCase(Subtask(id="s1", kind="global_adjustment", result=result), source=image)


def _crop_case(image: np.ndarray, rng: np.random.Generator) -> ImageCase:
    result = CROP_REQUESTS[int(rng.integers(len(CROP_REQUESTS)))]
    return ImageCase(Subtask(id="s1", kind="image_cropping", result=result), source=image, note=result or "edges")


_BUILDERS = {
    "image_upscaling": _upscale_case,
    "image_deblurring": _deblur_case,
    "outpainting": _outpaint_case,
    "global_adjustment": _adjust_case,
    "image_cropping": _crop_case,
}


def make_image_cases(kind: str, n: int, seed: int = 0) -> list[ImageCase]:
    """`n` cases of whole-image subtask `kind` from `seed` (the same seed gives the same cases on every machine).

    Raises:
        ValueError: `kind` is not one of `IMAGE_CASE_KINDS`.
    """
    if kind not in IMAGE_CASE_KINDS:
        raise ValueError(f"no whole-image cases for subtask {kind!r}; known: {sorted(IMAGE_CASE_KINDS)}")
    rng = np.random.default_rng(scene_seeds(1, seed, f"image-{kind}")[0])
    return [_BUILDERS[kind](image, rng) for image in _scenes(n, seed, f"image-{kind}")]


def image_truth(case: ImageCase, output: np.ndarray) -> tuple[str, float] | None:
    """(measure name, value) of `output` against the case's truth, or None when the case has none or the output
    does not have the truth's size.

    Upscaling: PSNR against the true high-resolution scene. Deblurring: PSNR gain over the blurred input against the
    sharp scene (dB; > 0 = closer to the truth than the input was). Outpainting: PSNR of the new border against the
    scene that was really there.
    """
    if case.truth is None or output.shape != case.truth.shape:
        return None
    kind = case.subtask.kind
    if kind == "image_deblurring":
        return "PSNR gain dB", psnr(output, case.truth) - psnr(case.image, case.truth)
    if kind == "outpainting":
        new = np.ones(output.shape[:2], dtype=bool)
        x0, y0 = case.origin
        new[y0 : y0 + case.image.shape[0], x0 : x0 + case.image.shape[1]] = False
        diff = output[new].astype(np.float64) - case.truth[new].astype(np.float64)
        mse = float(np.mean(diff**2))
        return "border PSNR dB", math.inf if mse == 0 else 10.0 * math.log10(255.0**2 / mse)
    return "PSNR vs true high-res dB", psnr(output, case.truth)
