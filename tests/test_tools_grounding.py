"""The grounding, privacy and background tools, run for real on generated scenes and on the portrait scikit-image ships.

Every tool: declared output types, determinism, untouched input, a clear error when its backend is missing. Then
what each one must do, and the clear `GroundingError` when it cannot find its target.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from costa.errors import GroundingError, ToolError, ToolUnavailableError
from costa.synthetic.cases_grounding import PORTRAITS, person_scene
from costa.synthetic.scenes import ObjectScene, make_object_scene, random_object_scene
from costa.tables import load_tables
from costa.tools import tool_class
from costa.tools.base import Tool
from costa.tools.colour_ground import colour_membership, hue_sector
from costa.types import TURN_ARTIFACTS, Box, EditState, Mask, Point, Requirements, Subtask, ToolOutput

TOOLS = (
    "points_grabcut", "colour_grounder", "haar_faces", "hog_people", "blur_region", "pixelate_region",
    "grabcut_background", "mask_background",
)  # fmt: skip
ASTRONAUT_FACE = Box(*PORTRAITS[0][1])


def make_tool(tool_id: str) -> Tool:
    return tool_class(load_tables().tools[tool_id])(load_tables().tools[tool_id])


def run(tool_id: str, state: EditState, subtask: Subtask, **params) -> ToolOutput:
    tool = make_tool(tool_id)
    return tool(state, subtask, {**tool.spec.params_for_attempt(0), **params})


def iou(a: np.ndarray, b: np.ndarray) -> float:
    return float((a & b).sum() / (a | b).sum())


@pytest.fixture(scope="module")
def astronaut() -> np.ndarray:
    from skimage.data import astronaut

    return np.ascontiguousarray(astronaut())


@pytest.fixture(scope="module")
def blue_blob() -> ObjectScene:
    return make_object_scene("flat", "ellipse", height=120, width=160, seed=3)


@pytest.fixture(scope="module")
def person() -> ObjectScene:
    return person_scene(2)  # a seed the HOG detector finds (it finds about two in three)


def contract_case(tool_id: str, blob: ObjectScene, face: np.ndarray, person: ObjectScene) -> tuple[EditState, Subtask]:
    seg = Subtask(id="s1", kind="object_segmentation", target="the blue object")
    if tool_id == "points_grabcut":
        return EditState(blob.image, {"points": (Point(80, 60),)}), seg
    if tool_id == "colour_grounder":
        return EditState(blob.image), seg
    if tool_id == "haar_faces":
        return EditState(face), Subtask(id="s1", kind="privacy_blur", target="the faces")
    if tool_id == "hog_people":
        return EditState(person.image), Subtask(id="s1", kind="object_detection", target="person")
    if tool_id in ("blur_region", "pixelate_region"):
        masks = (Mask(ASTRONAUT_FACE.to_mask(*face.shape[:2])),)
        return EditState(face, {"masks": masks}), Subtask(id="s1", kind="privacy_blur", target="the faces")
    bg = Subtask(id="s1", kind="background_removal")
    if tool_id == "grabcut_background":
        b = person.box
        return EditState(person.image, {"boxes": (Box(b.x - 12, b.y - 12, b.w + 24, b.h + 24),)}), bg
    return EditState(person.image, {"masks": (Mask(person.mask),)}), bg


class TestGroundingToolContract:
    """What every tool here promises: declared outputs, determinism, input untouched, a clear missing-backend error."""

    @pytest.mark.parametrize("tool_id", TOOLS)
    def test_outputs_match_declared_types_and_are_deterministic(self, tool_id, blue_blob, astronaut, person) -> None:
        state, subtask = contract_case(tool_id, blue_blob, astronaut, person)
        keep = state.image.copy()
        first, second = run(tool_id, state, subtask), run(tool_id, state, subtask)
        declared = set(load_tables().tools[tool_id].outputs)
        produced = (set(first.artifacts) - TURN_ARTIFACTS) | ({"image"} if first.image is not None else set())
        assert produced == declared
        assert np.array_equal(state.image, keep)
        if first.image is not None:
            assert first.image.shape == keep.shape and first.image.dtype == np.uint8
            assert first.edited_region is not None and first.edited_region.shape == keep.shape[:2]
            assert np.array_equal(first.image[~first.edited_region], keep[~first.edited_region])
            assert np.array_equal(first.image, second.image)
        for name in ("masks", "boxes"):
            if name in first.artifacts:
                a, b = first.artifacts[name], second.artifacts[name]
                assert len(a) == len(b) >= 1
                if name == "masks":
                    assert all(m.data.shape == keep.shape[:2] for m in a)
                    assert all(np.array_equal(x.data, y.data) for x, y in zip(a, b, strict=True))
                else:
                    assert a == b and all(0 <= x.score <= 1 for x in a)

    @pytest.mark.parametrize("tool_id", TOOLS)
    def test_missing_backend_raises_clear_error(self, tool_id, blue_blob, astronaut, person) -> None:
        spec = load_tables().tools[tool_id]
        tool = tool_class(spec)(replace(spec, requirements=Requirements(python=("no_such_backend_pkg",))))
        state, subtask = contract_case(tool_id, blue_blob, astronaut, person)
        with pytest.raises(ToolUnavailableError, match="no_such_backend_pkg"):
            tool(state, subtask, spec.params_for_attempt(0))


# ----------------------------------------------------------------------------------------------- colour words


def test_hue_sectors_separate_neighbouring_colours() -> None:
    from costa.colours import parse_colour

    def inside(sector: tuple[float, float], hue: float) -> bool:
        lo, hi = sector
        return lo <= hue <= hi if lo <= hi else hue >= lo or hue <= hi

    red, pink, orange = (hue_sector(parse_colour(c)) for c in ("red", "pink", "orange"))
    assert inside(red, 35) and not inside(red, 64) and not inside(red, 350)
    assert inside(pink, 350) and inside(pink, 8) and not inside(pink, 35)  # the pale table pink joins its family
    assert inside(orange, 62) and not inside(orange, 93)


def test_membership_follows_shading_but_not_other_colours() -> None:
    img = np.zeros((20, 60, 3), np.uint8)
    img[:, :20] = (205, 35, 40)  # red, lit
    img[:, 20:40] = (113, 19, 22)  # the same red in shadow (×0.55)
    img[:, 40:] = (235, 130, 30)  # orange
    red = colour_membership(img, (220, 20, 30))
    assert red[:, :40].all() and not red[:, 40:].any()
    white = colour_membership(np.full((4, 4, 3), 250, np.uint8), (255, 255, 255))
    assert white.all()


@pytest.mark.parametrize("seed", [1, 2, 5])
def test_colour_grounder_finds_the_named_object(seed: int) -> None:
    scene = random_object_scene(seed, background="gradient", colour="green")
    out = run(
        "colour_grounder", EditState(scene.image), Subtask(id="s1", kind="object_segmentation", target="green car")
    )
    mask = np.logical_or.reduce([m.data for m in out.artifacts["masks"]])
    assert iou(mask, scene.mask) >= 0.9
    assert "green" in out.notes


def test_colour_grounder_keeps_the_clicked_one_of_two() -> None:
    img = np.full((100, 200, 3), 225, np.uint8)
    img[30:70, 20:70] = (200, 30, 40)
    img[30:70, 130:180] = (190, 35, 35)
    state = EditState(img, {"points": (Point(150, 50),)})
    out = run(
        "colour_grounder", state, Subtask(id="s1", kind="object_recoloration", target="the red box", result="blue")
    )
    (mask,) = out.artifacts["masks"]
    assert mask.data[50, 150] and not mask.data[50, 40]
    both = run("colour_grounder", EditState(img), Subtask(id="s1", kind="object_segmentation", target="red boxes"))
    assert len(both.artifacts["masks"]) == 2


def test_colour_grounder_without_colour_word_names_what_would_ground_it(blue_blob) -> None:
    with pytest.raises(GroundingError) as e:
        run("colour_grounder", EditState(blue_blob.image), Subtask(id="s1", kind="object_removal", target="the car"))
    message = str(e.value)
    assert "'the car' names no colour" in message
    assert "Grounding DINO" in message and "costa doctor" in message and "click" in message and "box" in message


def test_colour_grounder_reports_a_colour_that_matches_nothing(blue_blob) -> None:
    with pytest.raises(GroundingError, match="no red region found in the image"):
        run("colour_grounder", EditState(blue_blob.image), Subtask(id="s1", kind="object_removal", target="red car"))


# ---------------------------------------------------------------------------------------------------- clicks


@pytest.mark.parametrize("background", ["flat", "texture"])
def test_points_grabcut_cuts_out_the_clicked_object(background: str) -> None:
    scene = make_object_scene(background, "ellipse", seed=4)  # type: ignore[arg-type]
    ys, xs = np.nonzero(scene.mask)
    click = Point(int(xs.mean()), int(ys.mean()))
    out = run(
        "points_grabcut", EditState(scene.image, {"points": (click,)}), Subtask(id="s1", kind="object_segmentation")
    )
    assert iou(out.artifacts["masks"][0].data, scene.mask) >= 0.9


def test_points_grabcut_on_a_small_piece_of_a_face_gets_the_face(astronaut) -> None:
    face = ASTRONAUT_FACE
    click = Point(face.x + face.w // 2, face.y + face.h // 2)
    out = run("points_grabcut", EditState(astronaut, {"points": (click,)}), Subtask(id="s1", kind="privacy_blur"))
    mask = out.artifacts["masks"][0].data
    assert mask[face.y : face.y2, face.x : face.x2].mean() > 0.5  # most of the face, though a click is not a box


def test_points_grabcut_negative_click_and_bad_clicks(blue_blob) -> None:
    seg = Subtask(id="s1", kind="object_segmentation")
    neg = run("points_grabcut", EditState(blue_blob.image, {"points": (Point(80, 60), Point(5, 5, False))}), seg)
    assert not neg.artifacts["masks"][0].data[5, 5]
    with pytest.raises(ToolError, match="no clicks"):
        run("points_grabcut", EditState(blue_blob.image), seg)
    with pytest.raises(ToolError, match="every click marks background"):
        run("points_grabcut", EditState(blue_blob.image, {"points": (Point(80, 60, False),)}), seg)
    with pytest.raises(ToolError, match="outside the 160x120 image"):
        run("points_grabcut", EditState(blue_blob.image, {"points": (Point(500, 60),)}), seg)


# ----------------------------------------------------------------------------------------------- detectors


def test_haar_finds_the_astronauts_face(astronaut) -> None:
    from costa.tools.detection import box_iou

    out = run("haar_faces", EditState(astronaut), Subtask(id="s1", kind="object_detection", target="faces"))
    best = out.artifacts["boxes"][0]
    assert box_iou(best, ASTRONAUT_FACE) >= 0.7 and best.score >= 0.5 and best.label == "face"


def test_haar_says_no_face_found_and_refuses_other_nouns(blue_blob, astronaut) -> None:
    with pytest.raises(GroundingError, match="no face found in the image"):
        run("haar_faces", EditState(blue_blob.image), Subtask(id="s1", kind="privacy_blur", target="faces"))
    with pytest.raises(GroundingError, match=r"finds faces only, not 'the car'.*Grounding DINO"):
        run("haar_faces", EditState(astronaut), Subtask(id="s1", kind="object_detection", target="the car"))


def test_hog_finds_the_person_and_refuses_other_nouns(person, blue_blob) -> None:
    out = run("hog_people", EditState(person.image), Subtask(id="s1", kind="object_detection", target="the man"))
    (best, *_) = out.artifacts["boxes"]
    covered = best.to_mask(*person.mask.shape)[person.mask].mean()
    assert covered >= 0.9 and best.label == "person"
    with pytest.raises(GroundingError, match="finds people only, not 'the dog'"):
        run("hog_people", EditState(person.image), Subtask(id="s1", kind="background_removal", target="the dog"))
    with pytest.raises(GroundingError, match="no person found"):
        run("hog_people", EditState(blue_blob.image), Subtask(id="s1", kind="privacy_blur", target="people"))


# ------------------------------------------------------------------------------------------------- privacy


@pytest.mark.parametrize("tool_id", ["blur_region", "pixelate_region"])
def test_privacy_tools_hide_the_face_and_touch_nothing_else(tool_id: str, astronaut) -> None:
    from costa.tools.faces import detect_faces

    state = EditState(astronaut, {"masks": (Mask(ASTRONAUT_FACE.to_mask(512, 512)),)})
    out = run(tool_id, state, Subtask(id="s1", kind="privacy_blur", target="faces"))
    assert np.array_equal(out.edited_region, ASTRONAUT_FACE.to_mask(512, 512))
    assert not detect_faces(out.image, min_neighbors=3)
    assert np.array_equal(out.image[~out.edited_region], astronaut[~out.edited_region])


@pytest.mark.parametrize("tool_id", ["blur_region", "pixelate_region"])
def test_privacy_tools_reject_missing_empty_and_wrong_size_masks(tool_id: str, astronaut) -> None:
    sub = Subtask(id="s1", kind="privacy_blur")
    with pytest.raises(ToolError, match="no region"):
        run(tool_id, EditState(astronaut), sub)
    with pytest.raises(ToolError, match="empty"):
        run(tool_id, EditState(astronaut, {"masks": (Mask(np.zeros((512, 512), bool)),)}), sub)
    with pytest.raises(ToolError, match="does not match"):
        run(tool_id, EditState(astronaut, {"masks": (Mask(np.ones((5, 5), bool)),)}), sub)


# ---------------------------------------------------------------------------------------------- background


def test_grabcut_background_keeps_the_person_and_whitens_the_rest(person) -> None:
    b = person.box
    state = EditState(person.image, {"boxes": (Box(b.x - 12, b.y - 12, b.w + 24, b.h + 24),)})
    out = run("grabcut_background", state, Subtask(id="s1", kind="background_removal"))
    subject = ~out.edited_region
    assert iou(subject, person.mask) >= 0.85
    assert (out.image[out.edited_region] == 255).all()


def test_background_fill_words(person) -> None:
    state = EditState(person.image, {"masks": (Mask(person.mask),)})
    sub = Subtask(id="s1", kind="background_removal")
    clear = run("mask_background", state, sub, fill="transparent")
    assert "shown as white" in clear.notes and (clear.image[~person.mask] == 255).all()
    black = run("mask_background", state, sub, fill="black")
    assert (black.image[~person.mask] == 0).all()
    with pytest.raises(ToolError, match="cannot fill the background with 'plaid'"):
        run("mask_background", state, sub, fill="plaid")
    with pytest.raises(ToolError, match="whole image"):
        run("mask_background", EditState(person.image, {"masks": (Mask(np.ones_like(person.mask)),)}), sub)
