"""Closed-set fast detection (COCO classes) with RT-DETR or DETR through transformers (`rtdetr_detect`).

The paper's YOLO role: a detector that knows a fixed label set (the checkpoint's `config.id2label`, COCO's 80
classes for PekingU/rtdetr_r50vd_coco_o365) and is much cheaper than Grounding DINO. The subtask's head noun is
matched against that label set (singular form, the checkpoint's own names, then the synonyms in
tool_tables/detector_labels.yaml, people words for "person"). A noun outside it is refused before the image goes
through the model (a deterministic `GroundingError`: no parameter would change it, so the search routes to Grounding
DINO). Boxes of the matched class carry a `Verification` with the class verified (the detector classified them) and
the target's position / ordinal / size / count words applied, as the face and people detectors do.

Any `AutoModelForObjectDetection` snapshot whose processor has `post_process_object_detection` loads (RT-DETR,
DETR with a transformers ResNet backbone); the original facebook/detr-* configs ask for a timm backbone, which is not
in the requirements.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from costa.errors import CostaError, GroundingError, ToolError
from costa.grounding import verified_boxes
from costa.models.device import Device
from costa.targets import PERSON_WORDS, parse_target, target_words
from costa.tools.neural import NeuralTool, local_only, only, run_grouped, to_device
from costa.tools.params import float_param
from costa.types import Box, EditState, Subtask, ToolCall, ToolOutput

SYNONYMS_TABLE = Path(__file__).resolve().parents[2] / "tool_tables" / "detector_labels.yaml"
MAX_BOXES = 10
_IRREGULAR = {"knives": "knife", "mice": "mouse", "skis": "skis", "scissors": "scissors", "glasses": "glass"}


@lru_cache(maxsize=1)
def synonyms() -> dict[str, str]:
    """Synonym word(s) → the detector label they name, from tool_tables/detector_labels.yaml."""
    doc = yaml.safe_load(SYNONYMS_TABLE.read_text(encoding="utf-8")) or {}
    out: dict[str, str] = {}
    for label, words in (doc.get("synonyms") or {}).items():
        for w in words or ():
            out[str(w).lower()] = str(label).lower()
    return out


def singular(word: str) -> str:
    """A plural noun's singular form by the usual English endings ("cups" → "cup", "buses" → "bus")."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def match_label(target: str | None, labels: Mapping[int, str]) -> str | None:
    """The detector label the target's head noun names, or None when it names none of them.

    Two-word labels are tried first with the word before the noun ("the hot dog" → "hot dog", "the red traffic
    light" → "traffic light"), then the noun alone, then synonyms; people words name "person".
    """
    names = {str(v).lower().replace("_", " ") for v in labels.values()}
    phrase = parse_target(target)
    words = target_words(phrase.text)
    if not phrase.noun or phrase.noun not in words:
        return None
    i = words.index(phrase.noun)
    noun = singular(phrase.noun)
    tried = [f"{words[i - 1]} {noun}"] if i > 0 else []
    tried.append(noun)
    for cand in tried:
        if cand in names:
            return cand
    for cand in tried:
        label = synonyms().get(cand)
        if label in names:
            return label
    if (phrase.noun in PERSON_WORDS or noun in PERSON_WORDS) and "person" in names:
        return "person"
    return None


def checkpoint_labels(path: Path) -> dict[int, str]:
    """The label set from the snapshot's config.json (read as JSON: the checkpoint's own names, nothing to run)."""
    try:
        doc = json.loads((path / "config.json").read_text(encoding="utf-8"))
        return {int(k): str(v) for k, v in doc["id2label"].items()}
    except (OSError, KeyError, ValueError, AttributeError) as e:
        raise ToolError(f"{path / 'config.json'} has no readable id2label: {e}") from e


def load_detector(path: Path, dev: Device, allow_downloads: bool = False) -> tuple[Any, Any]:
    """Image processor and object-detection model from a hub snapshot folder, on `dev` in its dtype, in eval mode."""
    from transformers import AutoImageProcessor, AutoModelForObjectDetection

    kw = local_only(allow_downloads)
    processor = AutoImageProcessor.from_pretrained(path, **kw)
    model = AutoModelForObjectDetection.from_pretrained(path, dtype=dev.torch_dtype(), **kw)
    return processor, model.to(dev.name).eval()


class ClosedSetDetector(NeuralTool):
    """Boxes of the COCO class the subtask's target names (RT-DETR / DETR).

    Params:
        threshold: least detection confidence kept, in [0, 1].
    """

    def model(self) -> tuple[Any, Any]:
        """The shared (image processor, model), loaded on first use."""
        allow = self.current_settings().allow_downloads
        return self.shared_model("closed_set_detector", self.weights_path(), lambda p, d: load_detector(p, d, allow))

    def load(self) -> None:
        self.model()

    batches = True

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        return only(self.run_batch([ToolCall(state, subtask, params)]))

    def run_batch(self, calls: Sequence[ToolCall]) -> list[ToolOutput | CostaError]:
        """Calls whose images the processor brings to one size (RT-DETR's fixed 640×640: all of them) in one pass;
        a target outside the label set is refused before its image goes through the model."""
        import torch
        from PIL import Image

        labels = checkpoint_labels(self.weights_path())
        processor, model = self.model()
        dev = self.device()

        def prepare(call: ToolCall) -> Mapping[str, Any]:
            if match_label(call.subtask.target, labels) is None:
                noun = parse_target(call.subtask.target).noun or (call.subtask.target or "").strip()
                raise GroundingError(
                    f"{self.spec.id} knows {len(labels)} classes (COCO) and {noun!r} is not one of them",
                    "Grounding DINO finds any noun; or click on it or draw a box",
                    deterministic=True,
                )
            return processor(images=Image.fromarray(call.state.image), return_tensors="pt")

        def forward(inputs: dict[str, Any]) -> Any:
            with torch.inference_mode():
                return model(**to_device(inputs, dev))

        def readout(call: ToolCall, inputs: Mapping[str, Any], outputs: Any) -> ToolOutput:
            return self._boxes(call, labels, processor, outputs)

        return run_grouped(calls, prepare, forward, readout)

    def _boxes(self, call: ToolCall, labels: Mapping[int, str], processor: Any, outputs: Any) -> ToolOutput:
        """One call's verified boxes of its class from its item of the model's outputs."""
        state, subtask = call.state, call.subtask
        threshold = float_param(call.params, "threshold")
        label = match_label(subtask.target, labels)
        assert label is not None  # refused in `prepare` otherwise
        result = processor.post_process_object_detection(
            outputs, threshold=threshold, target_sizes=[(state.height, state.width)]
        )[0]
        names = [str(labels.get(int(i), "")).lower().replace("_", " ") for i in result["labels"].cpu().tolist()]
        keep = [k for k, n in enumerate(names) if n == label]
        xyxy = result["boxes"].float().cpu().numpy()[keep]
        scores = result["scores"].float().cpu().numpy()[keep]
        boxes = _to_boxes(xyxy, scores, label, state)
        if not boxes:
            raise GroundingError(
                f"{self.spec.id} found no {label!r} above confidence {threshold:.2f}",
                "Grounding DINO may find it; or click on it or draw a box",
            )
        boxes = verified_boxes(self.spec.id, label, boxes, subtask.target, state)
        record = boxes[0].verification
        summary = record.summary() if record is not None else ""
        return ToolOutput(
            artifacts={"boxes": boxes},
            notes=f"{len(boxes)} {label!r} box(es) of {len(keep)} detected, best confidence "
            f"{max(b.score for b in boxes):.2f}; {summary}",
        )


def _to_boxes(xyxy: np.ndarray, scores: np.ndarray, label: str, state: EditState) -> tuple[Box, ...]:
    """Pixel boxes clipped to the image, best first, at most `MAX_BOXES`; degenerate ones dropped."""
    out: list[Box] = []
    for i in np.argsort(-scores)[:MAX_BOXES]:
        x1, y1, x2, y2 = (float(v) for v in xyxy[i])
        x1, y1 = max(0, int(np.floor(x1))), max(0, int(np.floor(y1)))
        x2, y2 = min(state.width, int(np.ceil(x2))), min(state.height, int(np.ceil(y2)))
        if x2 - x1 >= 2 and y2 - y1 >= 2:
            out.append(Box(x1, y1, x2 - x1, y2 - y1, label, float(np.clip(scores[i], 0.0, 1.0))))
    return tuple(out)
