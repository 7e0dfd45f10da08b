"""Segment Anything: a precise mask for each box, or for the user's clicks.

Two backends with the same behaviour:
- `SamSegmenter` (`sam`, `sam_points`): transformers' `SamModel` from a hub snapshot (facebook/sam-vit-base…). Needs
  no torchvision, so it is what the CPU install and CI use.
- `SegmentAnythingSegmenter` (`sam_segment_anything`): the `segment-anything` package with the original `.pth`
  checkpoints (vit_b / vit_l / vit_h). `segment_anything` imports torchvision, which only the GPU install has (the
  registry's torchvision wheels are built against the CUDA torch), so `missing()` says so on a CPU-only install.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from costa.errors import CostaError, ToolError
from costa.models.device import Device
from costa.tools.neural import NeuralTool, local_only, only, run_grouped, to_device
from costa.types import Box, EditState, Mask, Point, Subtask, ToolCall, ToolOutput


def load_sam(path: Path, dev: Device, allow_downloads: bool = False) -> tuple[Any, Any]:
    """Processor and `SamModel` from a hub snapshot folder on `dev` (float32 on the CPU)."""
    from transformers import SamModel, SamProcessor

    kw = local_only(allow_downloads)
    processor = SamProcessor.from_pretrained(path, **kw)
    model = SamModel.from_pretrained(path, dtype=dev.torch_dtype(), **kw)
    # transformers types `to` through a decorator that expects a model first; it takes a device name.
    return processor, model.to(dev.name).eval()  # type: ignore[arg-type]


def _masks_from(pred: np.ndarray, scores: np.ndarray, labels: Sequence[str]) -> tuple[Mask, ...]:
    out = []
    for i, label in enumerate(labels):
        data = np.asarray(pred[i], dtype=bool)
        if data.any():
            out.append(Mask(data, label, float(np.clip(scores[i], 0.0, 1.0))))
    if not out:
        raise ToolError("SAM returned empty masks for every prompt")
    return tuple(out)


#: A box-prompted mask is kept within its box grown by this share of the box's size (SAM sometimes leaks past it).
BOX_SLACK = 0.1


def _inside_boxes(masks: np.ndarray, boxes: Sequence[Box]) -> np.ndarray:
    out = np.zeros_like(masks, dtype=bool)
    h, w = masks.shape[1:]
    for i, b in enumerate(boxes):
        dx, dy = round(b.w * BOX_SLACK), round(b.h * BOX_SLACK)
        y1, y2, x1, x2 = max(0, b.y - dy), min(h, b.y2 + dy), max(0, b.x - dx), min(w, b.x2 + dx)
        out[i, y1:y2, x1:x2] = masks[i, y1:y2, x1:x2]
    return out


class SamSegmenter(NeuralTool):
    """One mask per box (`sam`), or one mask from all the clicks together (`sam_points`), with transformers' SAM."""

    def model(self) -> tuple[Any, Any]:
        """The shared (processor, model), loaded on first use."""
        allow = self.current_settings().allow_downloads
        return self.shared_model("sam", self.weights_path(), lambda p, d: load_sam(p, d, allow))

    def load(self) -> None:
        self.model()

    batches = True

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        return only(self.run_batch([ToolCall(state, subtask, params)]))

    def run_batch(self, calls: Sequence[ToolCall]) -> list[ToolOutput | CostaError]:
        """The image encoder (nearly all of SAM's cost) in one pass over the calls' images, which the processor
        brings to one 1024×1024 input; then each call's prompts through the mask decoder on its own embedding."""
        import torch
        from PIL import Image

        processor, model = self.model()
        dev = self.device()
        by_points = "points" in self.spec.inputs

        def prepare(call: ToolCall) -> Mapping[str, Any]:
            image = Image.fromarray(call.state.image)
            if by_points:
                points: tuple[Point, ...] = call.state.artifacts.get("points", ())
                if not points:
                    raise ToolError("no clicks to segment from")
                return processor(
                    images=image,
                    input_points=[[[[p.x, p.y] for p in points]]],
                    input_labels=[[[1 if p.positive else 0 for p in points]]],
                    return_tensors="pt",
                )
            boxes: tuple[Box, ...] = call.state.artifacts.get("boxes", ())
            if not boxes:
                raise ToolError("no boxes to segment")
            return processor(images=image, input_boxes=[[[b.x, b.y, b.x2, b.y2] for b in boxes]], return_tensors="pt")

        def forward(inputs: dict[str, Any]) -> Any:
            with torch.inference_mode():
                return SimpleNamespace(image_embeddings=model.get_image_embeddings(**to_device(inputs, dev)))

        def readout(call: ToolCall, inputs: Mapping[str, Any], encoded: Any) -> ToolOutput:
            prompt = {k: v for k, v in inputs.items() if k.startswith("input_")}
            with torch.inference_mode():
                outputs = model(
                    image_embeddings=encoded.image_embeddings, **to_device(prompt, dev), multimask_output=False
                )
            masks = (
                processor.image_processor.post_process_masks(
                    outputs.pred_masks.float().cpu(),
                    inputs["original_sizes"].cpu(),
                    inputs["reshaped_input_sizes"].cpu(),
                )[0][:, 0]
                .numpy()
                .astype(bool)
            )
            scores = outputs.iou_scores[0, :, 0].float().cpu().numpy()
            if by_points:
                points = call.state.artifacts["points"]
                out = _masks_from(masks, scores, [call.subtask.target or "clicked object"])
                return ToolOutput(artifacts={"masks": out}, notes=f"SAM mask from {len(points)} click(s)")
            boxes = call.state.artifacts["boxes"]
            out = _masks_from(_inside_boxes(masks, boxes), scores, [b.label for b in boxes])
            return ToolOutput(artifacts={"masks": out}, notes=f"SAM masks for {len(out)} box(es)")

        return run_grouped(calls, prepare, forward, readout, batched=("pixel_values",))


_CHECKPOINT_MODEL = {"vit_b": "sam_vit_b", "vit_l": "sam_vit_l", "vit_h": "sam_vit_h"}


class SegmentAnythingSegmenter(NeuralTool):
    """One mask per box with the `segment-anything` package and an original `.pth` checkpoint."""

    def missing(self) -> str | None:
        if importlib.util.find_spec("segment_anything") is not None and importlib.util.find_spec("torchvision") is None:
            return (
                "segment_anything needs torchvision, which is not installed (its registry wheels need the CUDA torch: "
                "use the GPU install, see README); SAM runs through transformers (tool `sam`) instead"
            )
        return super().missing()

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        import torch

        boxes: tuple[Box, ...] = state.artifacts.get("boxes", ())
        if not boxes:
            raise ToolError("no boxes to segment")
        path = self.weights_path()
        variant = next((k for k, v in _CHECKPOINT_MODEL.items() if path.name.startswith(v)), "vit_b")

        def load(p: Path, dev: Device) -> Any:
            from segment_anything import SamPredictor, sam_model_registry

            return SamPredictor(sam_model_registry[variant](checkpoint=str(p)).to(dev.name).eval())

        predictor = self.shared_model("segment_anything", path, load)
        with torch.inference_mode():
            predictor.set_image(state.image)
            tb = torch.tensor([[b.x, b.y, b.x2, b.y2] for b in boxes], device=predictor.device, dtype=torch.float32)
            tb = predictor.transform.apply_boxes_torch(tb, state.image.shape[:2])
            masks, scores, _ = predictor.predict_torch(None, None, boxes=tb, multimask_output=False)
        out = _masks_from(
            _inside_boxes(masks[:, 0].cpu().numpy(), boxes),
            scores[:, 0].float().cpu().numpy(),
            [b.label for b in boxes],
        )
        return ToolOutput(artifacts={"masks": out}, notes=f"SAM ({variant}) masks for {len(out)} box(es)")
