"""Monocular relative depth with DPT (MiDaS 3.0, `midas`) or Depth Anything (`depth_anything`) through transformers.

Both predict relative inverse depth (larger = nearer) at the model's resolution; the tool resizes it to the image's
size (the processor's `post_process_depth_estimation`, bicubic) and returns the `depth` artifact as the tables define
it: float32 (H, W), larger = farther, normalised to [0, 1] over the image (relative: no metres).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from costa.errors import CostaError, ToolError
from costa.models.device import Device
from costa.tools.neural import NeuralTool, local_only, only, run_grouped, to_device
from costa.types import EditState, Subtask, ToolCall, ToolOutput


def load_depth(path: Path, dev: Device, allow_downloads: bool = False) -> tuple[Any, Any]:
    """Image processor and depth model (DPT, Depth Anything…) from a hub snapshot folder, on `dev`, in eval mode."""
    from transformers import AutoImageProcessor, AutoModelForDepthEstimation

    kw = local_only(allow_downloads)
    processor = AutoImageProcessor.from_pretrained(path, **kw)
    model = AutoModelForDepthEstimation.from_pretrained(path, dtype=dev.torch_dtype(), **kw)
    return processor, model.to(dev.name).eval()


def farther_is_larger(inverse_depth: np.ndarray) -> np.ndarray:
    """Relative inverse depth (any scale) → depth in [0, 1] with 1 the farthest point (float32, same shape).

    A constant prediction has no order: it maps to all zeros.

    >>> farther_is_larger(np.array([[4.0, 2.0], [1.0, 1.0]])).tolist()
    [[0.0, 0.6666666865348816], [1.0, 1.0]]
    """
    d = np.asarray(inverse_depth, dtype=np.float64)
    lo, hi = float(np.min(d)), float(np.max(d))
    if not np.isfinite(lo) or not np.isfinite(hi):
        raise ToolError("the depth model returned non-finite values")
    if hi - lo <= 1e-12 * max(1.0, abs(hi)):
        return np.zeros(d.shape, np.float32)
    return ((hi - d) / (hi - lo)).astype(np.float32)


class DepthEstimator(NeuralTool):
    """A per-pixel relative depth map of the whole image (no parameters)."""

    def model(self) -> tuple[Any, Any]:
        """The shared (image processor, model), loaded on first use."""
        allow = self.current_settings().allow_downloads
        return self.shared_model("depth", self.weights_path(), lambda p, d: load_depth(p, d, allow))

    def load(self) -> None:
        self.model()

    batches = True

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        return only(self.run_batch([ToolCall(state, subtask, params)]))

    def run_batch(self, calls: Sequence[ToolCall]) -> list[ToolOutput | CostaError]:
        """Calls whose images the processor brings to the same size (DPT and Depth Anything keep the aspect ratio:
        images of one size and shape) in one pass; the others in their own passes."""
        import torch
        from PIL import Image

        processor, model = self.model()
        dev = self.device()

        def prepare(call: ToolCall) -> Mapping[str, Any]:
            return processor(images=Image.fromarray(call.state.image), return_tensors="pt")

        def forward(inputs: dict[str, Any]) -> Any:
            with torch.inference_mode():
                return model(**to_device(inputs, dev))

        def readout(call: ToolCall, inputs: Mapping[str, Any], outputs: Any) -> ToolOutput:
            state = call.state
            predicted = outputs.predicted_depth.float()
            pred = processor.post_process_depth_estimation(
                SimpleNamespace(predicted_depth=predicted), target_sizes=[(state.height, state.width)]
            )[0]
            depth = farther_is_larger(pred["predicted_depth"].cpu().numpy())
            if depth.shape != (state.height, state.width):
                raise ToolError(f"the depth map is {depth.shape}, not the image's {(state.height, state.width)}")
            model_side = tuple(inputs["pixel_values"].shape[-2:])
            return ToolOutput(
                artifacts={"depth": depth},
                notes=f"relative depth {state.width}×{state.height} (0 = nearest, 1 = farthest), predicted at "
                f"{model_side[1]}×{model_side[0]}",
            )

        return run_grouped(calls, prepare, forward, readout)
