"""Image captioning with BLIP through transformers (`blip_caption`).

BlipForConditionalGeneration decodes one sentence for the image by beam search; the caption is the decoded text with
special tokens dropped, first letter capitalised.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from costa.errors import ToolError
from costa.models.device import Device
from costa.tools.neural import NeuralTool, local_only, to_device
from costa.tools.params import int_param
from costa.types import EditState, Subtask, ToolOutput


def load_blip(path: Path, dev: Device, allow_downloads: bool = False) -> tuple[Any, Any]:
    """BlipProcessor and BlipForConditionalGeneration from a hub snapshot folder, on `dev`, in eval mode."""
    from transformers import BlipForConditionalGeneration, BlipProcessor

    kw = local_only(allow_downloads)
    processor = BlipProcessor.from_pretrained(path, **kw)
    model = BlipForConditionalGeneration.from_pretrained(path, dtype=dev.torch_dtype(), **kw)
    # transformers types `to` through a decorator that expects a model first; it takes a device name.
    return processor, model.to(dev.name).eval()  # type: ignore[arg-type]


class BlipCaptioner(NeuralTool):
    """One sentence describing the image.

    Params:
        max_tokens: most tokens generated (word pieces), >= 5.
        beams: beam-search width (1 = greedy).
    """

    def model(self) -> tuple[Any, Any]:
        """The shared (processor, model), loaded on first use."""
        allow = self.current_settings().allow_downloads
        return self.shared_model("blip_caption", self.weights_path(), lambda p, d: load_blip(p, d, allow))

    def load(self) -> None:
        self.model()

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        import torch
        from PIL import Image

        max_tokens = int_param(params, "max_tokens")
        beams = int_param(params, "beams")
        processor, model = self.model()
        dev = self.device()
        inputs = processor(images=Image.fromarray(state.image), return_tensors="pt")
        with torch.inference_mode():
            ids = model.generate(**to_device(inputs, dev), max_new_tokens=max_tokens, num_beams=beams)
        text = " ".join(processor.decode(ids[0], skip_special_tokens=True).split())
        if not text:
            raise ToolError("BLIP generated no words for this image")
        caption = text[0].upper() + text[1:]
        return ToolOutput(artifacts={"caption": caption}, notes=f"caption: {caption}")
