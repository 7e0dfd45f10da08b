"""The groundingdino-py backend of Grounding DINO (`grounding_dino_py`). The package is not installed here (it drags
in a CUDA torch): the adapter is proven against a FAKE `groundingdino` module object put into `sys.modules` (it
records its calls and returns scripted boxes; it is no model), and the test of the real package skips with the
tool's own reason."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from costa.errors import GroundingError
from costa.tools.grounding_dino_py import NOT_INSTALLED
from costa.types import EditState, Subtask

pytestmark = pytest.mark.neural  # the adapter builds torch tensors; the package's own test needs it too
INSTALLED = importlib.util.find_spec("groundingdino") is not None
CHECKPOINT, CONFIG = "groundingdino_swint_ogc.pth", "GroundingDINO_SwinT_OGC.py"


def _services(monkeypatch: pytest.MonkeyPatch, models: Path):
    from costa.services import Services

    monkeypatch.setenv("COSTA_MODELS_DIR", str(models))
    monkeypatch.setenv("COSTA_DEVICE", "cpu")
    return Services()


def _fake_weights(tmp_path: Path) -> Path:
    models = tmp_path / "models"
    models.mkdir()
    (models / CHECKPOINT).write_bytes(b"FAKE checkpoint: never loaded, the FAKE load_model only records its path")
    (models / CONFIG).write_text("# FAKE config\nmodelname = 'groundingdino'\n")
    return models


class FakeGroundingDino:
    """FAKE `groundingdino.util.inference`: the real functions' signatures, recorded calls, scripted predictions."""

    def __init__(self, boxes: list[list[float]], scores: list[float], phrases: list[str]) -> None:
        self.loads: list[dict[str, Any]] = []
        self.predictions: list[dict[str, Any]] = []
        self.reply = (boxes, scores, phrases)

    def load_model(self, model_config_path: str, model_checkpoint_path: str, device: str = "cuda") -> object:
        self.loads.append({"config": model_config_path, "checkpoint": model_checkpoint_path, "device": device})
        return "FAKE model"

    def predict(
        self,
        model: Any,
        image: Any,
        caption: str,
        box_threshold: float,
        text_threshold: float,
        device: str = "cuda",
        remove_combined: bool = False,
    ) -> tuple[Any, Any, list[str]]:
        import torch

        self.predictions.append(
            {"model": model, "image": image, "caption": caption, "box": box_threshold, "text": text_threshold,
             "device": device}
        )  # fmt: skip
        boxes, scores, phrases = self.reply
        return torch.tensor(boxes, dtype=torch.float32), torch.tensor(scores, dtype=torch.float32), list(phrases)

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Put FAKE `groundingdino`, `groundingdino.util` and `groundingdino.util.inference` into sys.modules."""
        names = ("groundingdino", "groundingdino.util", "groundingdino.util.inference")
        mods = {n: types.ModuleType(n) for n in names}
        for n, m in mods.items():
            m.__spec__ = importlib.machinery.ModuleSpec(n, None)  # find_spec() answers from sys.modules
            monkeypatch.setitem(sys.modules, n, m)
        mods["groundingdino"].util = mods["groundingdino.util"]  # type: ignore[attr-defined]
        mods["groundingdino.util"].inference = mods["groundingdino.util.inference"]  # type: ignore[attr-defined]
        mods["groundingdino.util.inference"].load_model = self.load_model  # type: ignore[attr-defined]
        mods["groundingdino.util.inference"].predict = self.predict  # type: ignore[attr-defined]


@pytest.mark.skipif(INSTALLED, reason="groundingdino is installed here: the tool does not report it missing")
def test_missing_says_the_package_is_not_installed(monkeypatch, tmp_path: Path) -> None:
    services = _services(monkeypatch, _fake_weights(tmp_path))
    assert services.why_not("grounding_dino_py") == NOT_INSTALLED  # weights are there: the package is all it lacks
    monkeypatch.setenv("COSTA_MODELS_DIR", str(tmp_path / "empty"))
    from costa.services import Services

    why = Services().why_not("grounding_dino_py") or ""
    assert why.startswith(NOT_INSTALLED + "; weights groundingdino_swint_ogc.pth not found")
    assert "GroundingDINO_SwinT_OGC.py not found" in why and "missing Python package" not in why


def test_the_adapter_loads_the_original_format_and_converts_boxes(monkeypatch, tmp_path: Path) -> None:
    models = _fake_weights(tmp_path)
    fake = FakeGroundingDino(
        boxes=[[0.5, 0.5, 0.25, 0.5], [0.2, 0.3, 0.1, 0.2], [0.75, 0.75, 0.25, 0.25]],  # normalised cx, cy, w, h
        scores=[0.6, 0.9, 0.7],
        phrases=["red car", "red", "car"],
    )
    fake.install(monkeypatch)
    services = _services(monkeypatch, models)
    assert services.why_not("grounding_dino_py") is None
    tool = services.tool("grounding_dino_py")
    image = np.zeros((480, 640, 3), np.uint8)
    out = tool(EditState(image), Subtask(id="s1", kind="object_detection", target="the red car"), {})
    # loaded once from the checkpoint and its config by file name, on the probed device
    assert fake.loads == [{"config": str(models / CONFIG), "checkpoint": str(models / CHECKPOINT), "device": "cpu"}]
    call = fake.predictions[0]
    assert call["model"] == "FAKE model" and call["caption"] == "red car." and call["device"] == "cpu"
    assert (call["box"], call["text"]) == (0.35, 0.25)  # the row's defaults
    assert tuple(call["image"].shape) == (3, 800, 1066)  # shorter side 800, as the original load_image
    assert abs(float(call["image"].mean()) - (-0.485 / 0.229 - 0.456 / 0.224 - 0.406 / 0.225) / 3) < 1e-3
    boxes = out.artifacts["boxes"]
    # "red" matched only the adjective: dropped; the others are pixel boxes, best first
    assert [(b.x, b.y, b.w, b.h) for b in boxes] == [(400, 300, 160, 120), (240, 120, 160, 240)]
    assert [b.label for b in boxes] == ["red car", "red car"] and [round(b.score, 2) for b in boxes] == [0.7, 0.6]
    assert "verified" in out.notes
    tool(EditState(image), Subtask(id="s1", kind="object_detection", target="car"), {"box_threshold": 0.25})
    assert len(fake.loads) == 1 and fake.predictions[1]["box"] == 0.25  # the model is shared, not reloaded


def test_boxes_matching_only_other_words_are_no_detection(monkeypatch, tmp_path: Path) -> None:
    fake = FakeGroundingDino(boxes=[[0.5, 0.5, 0.2, 0.2]], scores=[0.9], phrases=["red"])
    fake.install(monkeypatch)
    tool = _services(monkeypatch, _fake_weights(tmp_path)).tool("grounding_dino_py")
    with pytest.raises(GroundingError, match=r"no 'red car'.*1 box\(es\) matched other words"):
        tool(
            EditState(np.zeros((64, 64, 3), np.uint8)), Subtask(id="s1", kind="object_detection", target="red car"), {}
        )


@pytest.mark.skipif(not INSTALLED, reason=NOT_INSTALLED)
def test_the_real_package_with_the_original_checkpoint() -> None:  # pragma: no cover - GPU install only
    from costa.services import Services

    services = Services()
    why = services.why_not("grounding_dino_py")
    if why:
        pytest.skip(why)
    image = np.full((480, 640, 3), 255, np.uint8)
    image[150:330, 200:440] = (200, 20, 20)
    try:
        out = services.tool("grounding_dino_py")(
            EditState(image), Subtask(id="s1", kind="object_detection", target="red rectangle"), {}
        )
    except GroundingError:
        return  # real weights may see no rectangle: a recorded failure, not a crash
    assert all(0 <= b.x < 640 and 0 <= b.y < 480 for b in out.artifacts["boxes"])
