"""Caption consistency with CLIP through transformers (`clip_consistency`).

CLIP embeds the image and the caption; their cosine similarity (in [-1, 1]) at or above `min_similarity` makes the
caption "consistent", below it "inconsistent". For CLIP ViT-B/32 a matching caption typically scores 0.25–0.35 and an
unrelated one 0.10–0.20; the similarity is reported with the verdict so a user can judge a borderline case.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from costa.errors import CostaError, ToolError
from costa.models.device import Device
from costa.tools.neural import NeuralTool, local_only, only, to_device
from costa.tools.params import float_param
from costa.types import EditState, Subtask, ToolCall, ToolOutput


def load_clip(path: Path, dev: Device, allow_downloads: bool = False) -> tuple[Any, Any]:
    """CLIPProcessor (image processor + tokenizer) and CLIPModel from a hub snapshot folder, on `dev`, eval mode."""
    from transformers import CLIPModel, CLIPProcessor

    kw = local_only(allow_downloads)
    processor = CLIPProcessor.from_pretrained(path, **kw)
    model = CLIPModel.from_pretrained(path, dtype=dev.torch_dtype(), **kw)
    # transformers types `to` through a decorator that expects a model first; it takes a device name.
    return processor, model.to(dev.name).eval()  # type: ignore[arg-type]


class ClipCaptionChecker(NeuralTool):
    """Says whether the subtask's caption matches the image: "consistent" or "inconsistent".

    Params:
        min_similarity: least image-caption cosine similarity called consistent, in [-1, 1].
    """

    def model(self) -> tuple[Any, Any]:
        """The shared (processor, model), loaded on first use."""
        allow = self.current_settings().allow_downloads
        return self.shared_model("clip", self.weights_path(), lambda p, d: load_clip(p, d, allow))

    def load(self) -> None:
        self.model()

    batches = True

    def similarities(self, images: Sequence[EditState], captions: Sequence[str]) -> list[float]:
        """Cosine similarity of CLIP's embeddings of each image and its caption, in [-1, 1], in one forward pass
        (the captions padded to the longest; the attention mask keeps the padding out)."""
        import torch
        from PIL import Image

        processor, model = self.model()
        dev = self.device()
        inputs = processor(
            images=[Image.fromarray(s.image) for s in images], text=list(captions), return_tensors="pt",
            padding=True, truncation=True,
        )  # fmt: skip
        with torch.inference_mode():
            out = model(**to_device(inputs, dev))
        img = torch.nn.functional.normalize(out.image_embeds.float(), dim=-1)
        txt = torch.nn.functional.normalize(out.text_embeds.float(), dim=-1)
        return [float(v) for v in (img * txt).sum(dim=-1)]

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        return only(self.run_batch([ToolCall(state, subtask, params)]))

    def run_batch(self, calls: Sequence[ToolCall]) -> list[ToolOutput | CostaError]:
        """Every call's verdict from one forward pass over all of them; a call without a caption gets its error."""
        results: list[ToolOutput | CostaError] = []
        todo: list[tuple[int, ToolCall, str]] = []
        for call in calls:
            caption = (call.subtask.target or call.subtask.result or "").strip()
            if caption:
                todo.append((len(results), call, caption))
            results.append(ToolError("a caption consistency check needs the caption"))
        sims = self.similarities([c.state for _, c, _ in todo], [t for _, _, t in todo]) if todo else []
        for (i, call, _), sim in zip(todo, sims, strict=True):
            least = float_param(call.params, "min_similarity")
            answer = "consistent" if sim >= least else "inconsistent"
            results[i] = ToolOutput(
                artifacts={"label": answer},
                notes=f"caption {answer}: CLIP similarity {sim:.3f} ({'≥' if sim >= least else '<'} {least:.2f})",
            )
        return results
