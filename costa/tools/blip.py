"""Image captioning with BLIP through transformers (`blip_caption`).

BlipForConditionalGeneration decodes one sentence for the image by beam search; the caption is the decoded text with
special tokens dropped, first letter capitalised.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from costa.errors import CostaError, ToolError
from costa.models.device import Device
from costa.tools.neural import NeuralTool, local_only, only, to_device
from costa.tools.params import int_param
from costa.types import EditState, Subtask, ToolCall, ToolOutput


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

    batches = True

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        return only(self.run_batch([ToolCall(state, subtask, params)]))

    def run_batch(self, calls: Sequence[ToolCall]) -> list[ToolOutput | CostaError]:
        """Captions for every call: calls with the same `max_tokens` and `beams` share one `generate` pass."""
        results: list[ToolOutput | CostaError | None] = [None] * len(calls)
        groups: dict[tuple[int, int], list[int]] = {}
        for i, call in enumerate(calls):
            key = (int_param(call.params, "max_tokens"), int_param(call.params, "beams"))
            groups.setdefault(key, []).append(i)
        for (max_tokens, beams), members in groups.items():
            texts = self.captions([calls[i].state for i in members], max_tokens, beams)
            for i, text in zip(members, texts, strict=True):
                if not text:
                    results[i] = ToolError("BLIP generated no words for this image")
                    continue
                caption = text[0].upper() + text[1:]
                results[i] = ToolOutput(artifacts={"caption": caption}, notes=f"caption: {caption}")
        return [r for r in results if r is not None]

    def captions(self, states: Sequence[EditState], max_tokens: int, beams: int) -> list[str]:
        """One decoded sentence per image (special tokens dropped, spaces normalised), in one `generate` pass."""
        import torch
        from PIL import Image

        processor, model = self.model()
        dev = self.device()
        inputs = processor(images=[Image.fromarray(s.image) for s in states], return_tensors="pt")
        with torch.inference_mode():
            ids = model.generate(**to_device(inputs, dev), max_new_tokens=max_tokens, num_beams=beams)
        return [" ".join(processor.decode(row, skip_special_tokens=True).split()) for row in ids]
