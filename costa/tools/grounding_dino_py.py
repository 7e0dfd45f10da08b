"""Grounding DINO through the original `groundingdino` package (groundingdino-py) and its checkpoint format
(`grounding_dino_py`): the second backend of the same detector as `costa.tools.grounding_dino` (transformers).

It loads `groundingdino_swint_ogc.pth` with its config `GroundingDINO_SwinT_OGC.py`, both found by file name in
COSTA_MODELS_DIR, through `groundingdino.util.inference.load_model(model_config_path, model_checkpoint_path, device)`,
and predicts with `predict(model, image, caption, box_threshold, text_threshold, device)`, which returns boxes as
(cx, cy, w, h) normalised to [0, 1], one score per box and the caption phrase each box matched. A box is kept only
when its phrase contains the noun's head word, so the box reports the noun as verified (`VERIFIED_BY`).

The package is not in the requirements and not installed on the CPU build: it pulls a CUDA torch and compiles an
extension (see the README's GPU install). `missing()` says so, and the transformers backend serves instead.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from costa.errors import GroundingError
from costa.models.device import Device
from costa.targets import target_words
from costa.tools.grounding_dino import VERIFIED_BY, _to_boxes, noun_phrase
from costa.tools.neural import NeuralTool
from costa.tools.params import float_param
from costa.types import EditState, Subtask, ToolOutput

#: Why the tool cannot run when the package is absent (also the reason its real-package test is skipped).
NOT_INSTALLED = (
    "groundingdino-py is not installed (not in the requirements: it replaces the CPU torch with a CUDA build and "
    "compiles an extension; see README, GPU install); Grounding DINO runs through transformers (tool grounding_dino)"
)
#: The image preprocessing of the original repository: shorter side 800 px, longer side at most 1333 px, ImageNet norm.
SHORT_SIDE, LONG_SIDE_MAX = 800, 1333
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def load_original(checkpoint: Path, config: Path, dev: Device) -> Any:
    """The model built from `config` (the repository's .py config) with the weights of `checkpoint`, on `dev`."""
    from groundingdino.util.inference import load_model

    return load_model(model_config_path=str(config), model_checkpoint_path=str(checkpoint), device=dev.name)


def model_input_size(width: int, height: int) -> tuple[int, int]:
    """(width, height) the original preprocessing resizes to: shorter side 800, longer side capped at 1333 px.

    >>> model_input_size(640, 480)
    (1066, 800)
    >>> model_input_size(4000, 1000)
    (1332, 333)
    """
    short, long = min(width, height), max(width, height)
    size = SHORT_SIDE
    if long / short * size > LONG_SIDE_MAX:
        size = round(LONG_SIDE_MAX * short / long)
    if width < height:
        return size, int(size * height / width)
    return int(size * width / height), size


def preprocess(image: np.ndarray) -> Any:
    """The (3, H, W) float tensor the original `load_image` makes: resized, scaled to [0, 1], ImageNet-normalised."""
    import torch
    from PIL import Image

    pil = Image.fromarray(image).resize(model_input_size(image.shape[1], image.shape[0]), Image.Resampling.BILINEAR)
    t = torch.from_numpy(np.asarray(pil, dtype=np.float32) / 255.0).permute(2, 0, 1)
    return (t - torch.tensor(MEAN).view(3, 1, 1)) / torch.tensor(STD).view(3, 1, 1)


def cxcywh_to_xyxy(boxes: np.ndarray, width: int, height: int) -> np.ndarray:
    """Normalised (cx, cy, w, h) rows → pixel (x1, y1, x2, y2) rows.

    >>> cxcywh_to_xyxy(np.array([[0.5, 0.5, 0.5, 0.25]]), 200, 100).tolist()
    [[50.0, 37.5, 150.0, 62.5]]
    """
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    cx, cy, w, h = b[:, 0] * width, b[:, 1] * height, b[:, 2] * width, b[:, 3] * height
    return np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)


def phrase_names(phrase: str, noun: str) -> bool:
    """The detector's matched phrase names the noun: it contains the noun's head (last) word.

    >>> phrase_names("red car", "red car"), phrase_names("red", "red car"), phrase_names("", "car")
    (True, False, False)
    """
    words = target_words(noun)
    return bool(words) and words[-1] in target_words(phrase)


class GroundingDinoOriginal(NeuralTool):
    """Boxes for the subtask's noun from the original Grounding DINO package and checkpoint.

    Params:
        box_threshold: least box confidence kept, in [0, 1].
        text_threshold: least token match for the phrase, in [0, 1].
    """

    def missing(self) -> str | None:
        reason = super().missing()
        if importlib.util.find_spec("groundingdino") is not None:
            return reason
        rest = [p for p in (reason or "").split("; ") if p and p != "missing Python package(s): groundingdino"]
        return "; ".join([NOT_INSTALLED, *rest])

    def model(self) -> Any:
        """The shared model, built and loaded on first use."""
        config = self.weights_path(1)
        return self.shared_model("groundingdino_py", self.weights_path(0), lambda p, d: load_original(p, config, d))

    def load(self) -> None:
        self.model()

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        from groundingdino.util.inference import predict

        box_threshold = float_param(params, "box_threshold")
        text_threshold = float_param(params, "text_threshold")
        noun = noun_phrase(subtask.target)
        if not noun:
            raise GroundingError("the subtask names no object to find", "name the object, or click on it")
        boxes, logits, phrases = predict(
            model=self.model(),
            image=preprocess(state.image),
            caption=noun + ".",
            box_threshold=box_threshold,
            text_threshold=text_threshold,
            device=self.device().name,
        )
        cxcywh = boxes.detach().float().cpu().numpy() if hasattr(boxes, "detach") else np.asarray(boxes)
        scores = logits.detach().float().cpu().numpy() if hasattr(logits, "detach") else np.asarray(logits)
        keep = [i for i, phrase in enumerate(phrases) if phrase_names(str(phrase), noun)]
        dropped = len(phrases) - len(keep)
        found = _to_boxes(cxcywh_to_xyxy(cxcywh[keep], state.width, state.height), scores[keep], noun, state)
        if not found:
            other = f" ({dropped} box(es) matched other words of the prompt)" if dropped else ""
            raise GroundingError(
                f"Grounding DINO found no {noun!r} above confidence {box_threshold:.2f}{other}",
                "click on it or draw a box",
            )
        return ToolOutput(
            artifacts={"boxes": found},
            notes=f"{len(found)} {noun!r} box(es), best confidence {found[0].score:.2f} ({VERIFIED_BY} verified; "
            f"original checkpoint)",
        )
