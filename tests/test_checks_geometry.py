"""Checks of moves, size changes and crops on drawn images with known answers; other new kinds are never passed."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from costa.checks import CheckContext, subtask_checks
from costa.checks.geometry import GEOMETRY_CHECKS
from costa.types import EditState, Mask, Subtask, ToolOutput

CTX = CheckContext(reader=None)  # type: ignore[arg-type]  # these checks read no text


def _background(h: int = 120, w: int = 160) -> np.ndarray:
    rng = np.random.default_rng(0)
    base = np.full((h, w, 3), 200, np.uint8)
    return np.clip(base.astype(np.int16) + rng.integers(-6, 7, (h, w, 3)), 0, 255).astype(np.uint8)


def _object(size: int = 24) -> np.ndarray:
    """A textured patch (a checker with a stripe) so correlation has something to find."""
    patch = np.zeros((size, size, 3), np.uint8)
    yy, xx = np.mgrid[:size, :size]
    patch[..., 0] = np.where((yy // 6 + xx // 6) % 2 == 0, 220, 40)
    patch[..., 1] = (xx * 255 // size).astype(np.uint8)
    patch[..., 2] = 90
    return patch


def _scene(x: int, y: int, scale: float = 1.0) -> np.ndarray:
    img = _background()
    patch = _object()
    if scale != 1.0:
        patch = cv2.resize(patch, None, fx=scale, fy=scale, interpolation=cv2.INTER_LINEAR)
    img[y : y + patch.shape[0], x : x + patch.shape[1]] = patch
    return img


def _before(x: int = 60, y: int = 40) -> EditState:
    mask = np.zeros((120, 160), bool)
    mask[y : y + 24, x : x + 24] = True
    return EditState(_scene(x, y), {"masks": (Mask(mask, "box"),)})


def _judge(kind: str, subtask: Subtask, before: EditState, image: np.ndarray):
    out = ToolOutput(image=image)
    return GEOMETRY_CHECKS[kind](CTX, subtask, before, EditState(image), out)


def _move(direction: str) -> Subtask:
    return Subtask(id="s1", kind="object_move", target="box", result=direction, params={"direction": direction})


def test_a_move_the_asked_way_passes_and_the_wrong_way_fails() -> None:
    before = _before()
    moved_right = _scene(100, 40)
    assert _judge("object_move", _move("right"), before, moved_right).quality == 1.0
    assert _judge("object_move", _move("left"), before, moved_right).quality == 0.0
    assert _judge("object_move", _move("up"), before, moved_right).quality == 0.0  # across, not along
    assert _judge("object_move", _move("up"), before, _scene(60, 5)).quality == 1.0


def test_an_unmoved_object_fails_the_move() -> None:
    before = _before()
    verdict = _judge("object_move", _move("right"), before, before.image.copy())
    assert verdict.quality == 0.0 and any("shift" in r for r in verdict.reasons)


def test_a_move_to_a_place_cannot_be_checked_by_a_program() -> None:
    subtask = Subtask(id="s1", kind="object_move", target="box", result="next to the sofa")
    verdict = _judge("object_move", subtask, _before(), _scene(100, 40))
    assert verdict.quality == 0.0 and "no programmatic check can verify" in verdict.reasons[0]


def _size(result: str, scale: float | None) -> Subtask:
    params: dict[str, object] = {"attribute": "size"}
    if scale is not None:
        params["scale"] = scale
    return Subtask(id="s1", kind="attribute_edit", target="box", result=result, params=params)


def test_a_size_change_must_match_the_asked_scale() -> None:
    before = _before()
    doubled = _scene(50, 30, scale=2.0)
    assert _judge("attribute_edit", _size("larger", 2.0), before, doubled).quality == 1.0
    assert _judge("attribute_edit", _size("larger", 4.0), before, doubled).quality == 0.0
    assert _judge("attribute_edit", _size("larger", None), before, doubled).quality == 1.0
    assert _judge("attribute_edit", _size("smaller", None), before, doubled).quality == 0.0
    halved = _scene(60, 40, scale=0.5)
    assert _judge("attribute_edit", _size("smaller", 0.5), before, halved).quality == 1.0


def test_an_unchanged_size_fails() -> None:
    before = _before()
    assert _judge("attribute_edit", _size("larger", 2.0), before, before.image.copy()).quality == 0.0


@pytest.mark.parametrize(
    ("kind", "params"),
    [("attribute_edit", {"attribute": "material"}), ("style_transfer", {}), ("viewpoint_change", {})],
)
def test_edits_no_program_can_judge_are_never_passed(kind: str, params: dict) -> None:
    subtask = Subtask(id="s1", kind=kind, target=None, result="wooden", params=params)
    verdict = _judge(kind, subtask, _before(), _scene(60, 40))
    assert verdict.quality == 0.0 and "no programmatic check can verify" in verdict.reasons[0]


def test_a_crop_is_a_part_of_the_old_image() -> None:
    before = _before()
    subtask = Subtask(id="s1", kind="image_cropping", target="box")
    assert _judge("image_cropping", subtask, before, before.image[30:80, 50:110].copy()).quality == 1.0
    assert _judge("image_cropping", subtask, before, before.image.copy()).quality == 0.0
    other = np.full((50, 60, 3), 10, np.uint8)
    assert _judge("image_cropping", subtask, before, other).quality == 0.0


def test_every_new_kind_has_a_check() -> None:
    assert set(GEOMETRY_CHECKS) <= set(subtask_checks())
