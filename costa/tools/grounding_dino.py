"""Open-vocabulary detection and grounding with Grounding DINO through transformers (`grounding_dino`).

One loaded model serves detection and grounding of any noun (the shared model cache key is the weights' path). A
box it returns was matched to the subtask's noun by the detector's text branch: it reports the noun as verified
(`VERIFIED_BY`), unlike a colour blob or a click.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from costa.errors import CostaError, GroundingError
from costa.models.device import Device
from costa.targets import target_words
from costa.tools.neural import NeuralTool, local_only, only, run_grouped, to_device
from costa.tools.params import float_param
from costa.types import Box, EditState, Subtask, ToolCall, ToolOutput

#: What a Grounding DINO box verified about its target (hook for the typed verification record on boxes/masks).
VERIFIED_BY = "class"
_ARTICLES = {"the", "a", "an", "this", "that", "these", "those", "my", "his", "her", "its", "their"}
MAX_BOXES = 5


def noun_phrase(target: str | None) -> str:
    """The target as the detector's text prompt: lower case, no leading article ("the red car" → "red car")."""
    words = target_words(target)
    while words and words[0] in _ARTICLES:
        words = words[1:]
    return " ".join(words)


def load_grounding_dino(path: Path, dev: Device, allow_downloads: bool = False) -> tuple[Any, Any]:
    """Processor and model from a hub snapshot folder, on `dev` in its dtype, in eval mode."""
    from transformers import AutoModelForZeroShotObjectDetection, AutoProcessor

    kw = local_only(allow_downloads)
    processor = AutoProcessor.from_pretrained(path, **kw)
    model = AutoModelForZeroShotObjectDetection.from_pretrained(path, dtype=dev.torch_dtype(), **kw)
    return processor, model.to(dev.name).eval()


class GroundingDinoDetector(NeuralTool):
    """Boxes for the subtask's target noun, from Grounding DINO's text-conditioned detection.

    Params:
        box_threshold: least box confidence kept, in [0, 1].
        text_threshold: least token match for the noun, in [0, 1].
    """

    def model(self) -> tuple[Any, Any]:
        """The shared (processor, model), loaded on first use."""
        allow = self.current_settings().allow_downloads
        return self.shared_model("grounding_dino", self.weights_path(), lambda p, d: load_grounding_dino(p, d, allow))

    def load(self) -> None:
        self.model()

    batches = True

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        return only(self.run_batch([ToolCall(state, subtask, params)]))

    def run_batch(self, calls: Sequence[ToolCall]) -> list[ToolOutput | CostaError]:
        """Calls whose processed image and prompt have the same shapes (one image size, prompts of as many tokens) in
        one pass; nothing is padded, since padding an image would move its boxes."""
        import torch
        from PIL import Image

        processor, model = self.model()
        dev = self.device()

        def prepare(call: ToolCall) -> Mapping[str, Any]:
            noun = noun_phrase(call.subtask.target)
            if not noun:
                raise GroundingError("the subtask names no object to find", "name the object, or click on it")
            return processor(images=Image.fromarray(call.state.image), text=noun + ".", return_tensors="pt")

        def forward(inputs: dict[str, Any]) -> Any:
            with torch.inference_mode():
                return model(**to_device(inputs, dev))

        def readout(call: ToolCall, inputs: Mapping[str, Any], outputs: Any) -> ToolOutput:
            state, noun = call.state, noun_phrase(call.subtask.target)
            box_threshold = float_param(call.params, "box_threshold")
            result = processor.post_process_grounded_object_detection(
                outputs,
                inputs["input_ids"].to(dev.name),
                threshold=box_threshold,
                text_threshold=float_param(call.params, "text_threshold"),
                target_sizes=[(state.height, state.width)],
            )[0]
            scores = result["scores"].float().cpu().numpy()
            boxes = _to_boxes(result["boxes"].float().cpu().numpy(), scores, noun, state)
            if not boxes:
                raise GroundingError(
                    f"Grounding DINO found no {noun!r} above confidence {box_threshold:.2f}",
                    "click on it or draw a box",
                )
            return ToolOutput(
                artifacts={"boxes": boxes},
                notes=f"{len(boxes)} {noun!r} box(es), best confidence {boxes[0].score:.2f} ({VERIFIED_BY} verified)",
            )

        return run_grouped(calls, prepare, forward, readout)


def _to_boxes(xyxy: np.ndarray, scores: np.ndarray, noun: str, state: EditState) -> tuple[Box, ...]:
    """Pixel boxes clipped to the image, best first, at most `MAX_BOXES`; degenerate ones dropped."""
    out: list[Box] = []
    for i in np.argsort(-scores)[:MAX_BOXES]:
        x1, y1, x2, y2 = (float(v) for v in xyxy[i])
        x1, y1 = max(0, int(np.floor(x1))), max(0, int(np.floor(y1)))
        x2, y2 = min(state.width, int(np.ceil(x2))), min(state.height, int(np.ceil(y2)))
        if x2 - x1 >= 2 and y2 - y1 >= 2:
            out.append(Box(x1, y1, x2 - x1, y2 - y1, noun, float(np.clip(scores[i], 0.0, 1.0))))
    return tuple(out)
