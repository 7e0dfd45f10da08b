"""The embedded object tools, run for real on generated scenes with ground truth (costa.synthetic.scenes)."""

from __future__ import annotations

import numpy as np
import pytest

from costa.checks.common import shading_correlation, ssim_outside, unchanged_outside
from costa.checks.objects import OBJECT_CHECKS
from costa.errors import InputError, ToolError, ToolUnavailableError
from costa.masks import dilate_mask
from costa.synthetic.scenes import ObjectScene, make_background, make_object_scene
from costa.tools.base import Tool
from costa.tools.recolour import HsvRecolorer, LabRecolorer
from costa.tools.removal import PatchMatchRemover, TeleaRemover
from costa.tools.segment import BoxMasker, GrabCutSegmenter
from costa.types import TURN_ARTIFACTS, Box, EditState, Mask, Requirements, Subtask, ToolOutput, ToolSpec

BACKGROUNDS = ("flat", "gradient", "texture")


def _real_spec(tool_id: str) -> ToolSpec:
    """The tool's own row of tool_tables/tools.yaml: its declared parameters, defaults, ranges and retries."""
    from costa.tables import load_tables

    return load_tables().tools[tool_id]


SPECS: dict[str, tuple[type[Tool], ToolSpec]] = {
    tool_id: (cls, _real_spec(tool_id))
    for tool_id, cls in {
        "recolor_lab": LabRecolorer,
        "recolor_hsv": HsvRecolorer,
        "remove_patchmatch": PatchMatchRemover,
        "remove_telea": TeleaRemover,
        "grabcut_segment": GrabCutSegmenter,
        "box_mask": BoxMasker,
    }.items()
}


def make_tool(tool_id: str) -> Tool:
    cls, spec = SPECS[tool_id]
    return cls(spec)


def run_tool(tool_id: str, state: EditState, subtask: Subtask, attempt: int = 0) -> ToolOutput:
    tool = make_tool(tool_id)
    return tool(state, subtask, tool.spec.params_for_attempt(attempt))


def recolour_task(colour: str = "pink") -> Subtask:
    return Subtask(id="s1", kind="object_recoloration", target="object", result=colour)


REMOVE = Subtask(id="s1", kind="object_removal", target="object")
SEGMENT = Subtask(id="s1", kind="object_segmentation", target="object")


def masked_state(scene: ObjectScene) -> EditState:
    return EditState(scene.image, {"masks": (Mask(scene.mask, label="object"),)})


def masked_psnr(a: np.ndarray, b: np.ndarray, mask: np.ndarray) -> float:
    """PSNR in dB over the masked pixels only."""
    err = (a.astype(np.float64) - b.astype(np.float64))[mask]
    return float(10 * np.log10(255.0**2 / max(np.mean(err**2), 1e-12)))


def iou(a: np.ndarray, b: np.ndarray) -> float:
    return float((a & b).sum() / (a | b).sum())


# ------------------------------------------------------------------------------------------------ contract


@pytest.fixture(scope="module")
def scene() -> ObjectScene:
    return make_object_scene(
        "gradient", "ellipse", height=96, width=128, seed=2
    )  # small: the contract runs every tool twice


def contract_input(tool_id: str, scene: ObjectScene) -> tuple[EditState, Subtask]:
    if tool_id.startswith("recolor"):
        return masked_state(scene), recolour_task("teal")
    if tool_id.startswith("remove"):
        return masked_state(scene), REMOVE
    return EditState(scene.image, {"boxes": (scene.box,)}), SEGMENT


class TestToolContract:
    """What every object tool promises: declared output types, determinism, in-bounds masks, clear failures."""

    @pytest.mark.parametrize("tool_id", sorted(SPECS))
    def test_outputs_match_declared_types_and_are_deterministic(self, tool_id: str, scene: ObjectScene) -> None:
        state, subtask = contract_input(tool_id, scene)
        first = run_tool(tool_id, state, subtask)
        second = run_tool(tool_id, state, subtask)
        declared = set(SPECS[tool_id][1].outputs)
        produced = (set(first.artifacts) - TURN_ARTIFACTS) | ({"image"} if first.image is not None else set())
        assert produced == declared
        invented = first.artifacts.get("invented")
        if invented is not None:  # a fill is invented content: later analysis in the turn must not read it
            assert invented.dtype == bool and np.array_equal(invented, first.edited_region)
        if first.image is not None:
            assert first.image.dtype == np.uint8 and first.image.shape == scene.image.shape
            assert first.edited_region is not None and first.edited_region.dtype == bool
            assert first.edited_region.shape == scene.mask.shape
            # Nothing outside the declared region changed, bit for bit.
            assert np.array_equal(first.image[~first.edited_region], scene.image[~first.edited_region])
            assert np.array_equal(first.image, second.image)
            assert state.image is not first.image and np.array_equal(state.image, scene.image)  # input untouched
        for masks in (first.artifacts.get("masks"), second.artifacts.get("masks")):
            if masks is not None:
                assert all(isinstance(m, Mask) and m.data.shape == scene.mask.shape for m in masks)
        if "masks" in first.artifacts:
            pairs = zip(first.artifacts["masks"], second.artifacts["masks"], strict=True)
            assert all(np.array_equal(a.data, b.data) for a, b in pairs)

    @pytest.mark.parametrize("tool_id", sorted(SPECS))
    def test_missing_backend_raises_clear_error(self, tool_id: str, scene: ObjectScene) -> None:
        cls, spec = SPECS[tool_id]
        from dataclasses import replace

        tool = cls(replace(spec, requirements=Requirements(python=("no_such_backend_pkg",))))
        state, subtask = contract_input(tool_id, scene)
        with pytest.raises(ToolUnavailableError, match="no_such_backend_pkg"):
            tool(state, subtask, spec.params_for_attempt(0))

    @pytest.mark.parametrize("tool_id", ["recolor_lab", "recolor_hsv", "remove_patchmatch", "remove_telea"])
    def test_mask_tools_fail_on_missing_or_empty_mask(self, tool_id: str, scene: ObjectScene) -> None:
        _, subtask = contract_input(tool_id, scene)
        with pytest.raises(ToolError, match="no object mask"):
            run_tool(tool_id, EditState(scene.image), subtask)
        empty = EditState(scene.image, {"masks": (Mask(np.zeros_like(scene.mask)),)})
        with pytest.raises(ToolError, match="empty"):
            run_tool(tool_id, empty, subtask)
        wrong_size = EditState(scene.image, {"masks": (Mask(np.ones((5, 5), bool)),)})
        with pytest.raises(ToolError, match="does not match"):
            run_tool(tool_id, wrong_size, subtask)

    @pytest.mark.parametrize("tool_id", ["grabcut_segment", "box_mask"])
    def test_box_tools_fail_without_boxes(self, tool_id: str, scene: ObjectScene) -> None:
        with pytest.raises(ToolError, match="no boxes"):
            run_tool(tool_id, EditState(scene.image), SEGMENT)
        outside = EditState(scene.image, {"boxes": (Box(1000, 1000, 10, 10),)})
        with pytest.raises(ToolError, match="outside"):
            run_tool(tool_id, outside, SEGMENT)

    def test_bad_parameter_is_named(self, scene: ObjectScene) -> None:
        tool = make_tool("recolor_lab")
        with pytest.raises(InputError, match=r"strength=2.0 is outside \[0.0, 1.0\]"):
            tool(masked_state(scene), recolour_task(), {"strength": 2.0, "feather": 1.5})
        with pytest.raises(InputError, match="feather='wide' is not a finite number"):
            tool(masked_state(scene), recolour_task(), {"strength": 1.0, "feather": "wide"})


# --------------------------------------------------------------------------------------------- recolouring


@pytest.mark.parametrize("background", BACKGROUNDS)
@pytest.mark.parametrize("shape", ["ellipse", "rectangle"])
def test_lab_recolour_to_pink_keeps_shading_and_surroundings(background: str, shape: str) -> None:
    from costa.checks.common import ciede2000_values

    scene = make_object_scene(background, shape, seed=5)  # type: ignore[arg-type]
    state = masked_state(scene)
    out = run_tool("recolor_lab", state, recolour_task("pink"))
    after = state.with_output(out)

    assert float(np.median(ciede2000_values(out.image, scene.mask, (255, 192, 203)))) <= 10.0
    corr = shading_correlation(scene.image, out.image, scene.mask)
    assert corr is not None and corr >= 0.9
    outside = ssim_outside(scene.image, out.image, out.edited_region)
    assert outside is not None and outside >= 0.99
    assert unchanged_outside(scene.image, out.image, out.edited_region).quality == 1.0
    verdict = OBJECT_CHECKS["object_recoloration"](None, recolour_task("pink"), state, after, out)  # type: ignore[arg-type]
    assert verdict.passed(0.8), verdict.reasons


def test_lab_recolour_region_is_mask_grown_by_feather() -> None:
    scene = make_object_scene("flat", "ellipse")
    state = masked_state(scene)
    out = run_tool("recolor_lab", state, recolour_task("gold"))
    assert (out.edited_region >= scene.mask).all()
    assert not (out.edited_region & ~dilate_mask(scene.mask, 5)).any()  # 1.5 px feather reaches < 5 px out
    assert out.edited_region.sum() > scene.mask.sum()
    hard = run_tool("recolor_lab", state, recolour_task("gold"), attempt=1)  # retry: feather 0.5
    assert hard.edited_region.sum() < out.edited_region.sum()
    tool = make_tool("recolor_lab")
    crisp = tool(state, recolour_task("gold"), {"strength": 1.0, "feather": 0.0})
    assert np.array_equal(crisp.edited_region, scene.mask)


@pytest.mark.parametrize("colour", ["white", "black", "grey"])
def test_hsv_recolour_is_cruder_on_achromatic_targets(colour: str) -> None:
    scene = make_object_scene("flat", "ellipse")
    state = masked_state(scene)
    check = OBJECT_CHECKS["object_recoloration"]
    scores = {}
    for tool_id in ("recolor_lab", "recolor_hsv"):
        out = run_tool(tool_id, state, recolour_task(colour))
        scores[tool_id] = check(None, recolour_task(colour), state, state.with_output(out), out).quality  # type: ignore[arg-type]
    assert scores["recolor_lab"] >= 0.8
    assert scores["recolor_hsv"] < 0.8
    assert scores["recolor_hsv"] < scores["recolor_lab"]


def test_hsv_recolour_is_fine_on_a_hue_change_of_similar_lightness() -> None:
    scene = make_object_scene("texture", "rectangle")
    state = masked_state(scene)
    out = run_tool("recolor_hsv", state, recolour_task("navy"))
    verdict = OBJECT_CHECKS["object_recoloration"](None, recolour_task("navy"), state, state.with_output(out), out)  # type: ignore[arg-type]
    assert verdict.passed(0.8), verdict.reasons


def test_recolour_rejects_unknown_colour(scene: ObjectScene) -> None:
    for tool_id in ("recolor_lab", "recolor_hsv"):
        with pytest.raises(ToolError, match="plaid"):
            run_tool(tool_id, masked_state(scene), recolour_task("plaid"))


def test_recolour_accepts_hex_and_multiple_masks() -> None:
    scene = make_object_scene("flat", "ellipse")
    left, right = scene.mask.copy(), scene.mask.copy()
    left[:, 128:] = False
    right[:, :128] = False
    state = EditState(scene.image, {"masks": (Mask(left), Mask(right))})
    out = run_tool("recolor_lab", state, recolour_task("#ff0000"))
    red = out.image[scene.mask].astype(int)
    assert np.median(red[:, 0] - red[:, 2]) > 100  # red channel dominates blue everywhere in the union


# ------------------------------------------------------------------------------------------------- removal


@pytest.fixture(scope="module")
def removals() -> dict[tuple[str, str], tuple[ObjectScene, ToolOutput]]:
    """Each remover on a flat and a textured scene, run once for the tests below."""
    results = {}
    for background in ("flat", "texture"):
        size = {"height": 96, "width": 128} if background == "flat" else {}  # a flat fill needs no large scene
        scene = make_object_scene(background, "ellipse", seed=7, **size)  # type: ignore[arg-type]
        for tool_id in ("remove_patchmatch", "remove_telea"):
            results[tool_id, background] = (scene, run_tool(tool_id, masked_state(scene), REMOVE))
    return results


@pytest.mark.parametrize("tool_id", ["remove_patchmatch", "remove_telea"])
def test_removal_restores_flat_background(tool_id: str, removals: dict) -> None:
    scene, out = removals[tool_id, "flat"]
    assert masked_psnr(out.image, scene.background, out.edited_region) >= 30.0  # measured ≈ 38–39 dB
    state = masked_state(scene)
    verdict = OBJECT_CHECKS["object_removal"](None, REMOVE, state, state.with_output(out), out)  # type: ignore[arg-type]
    assert verdict.passed(0.8), verdict.reasons


def test_patchmatch_beats_telea_on_texture(removals: dict) -> None:
    scene, pm = removals["remove_patchmatch", "texture"]
    _, telea = removals["remove_telea", "texture"]
    pm_psnr = masked_psnr(pm.image, scene.background, pm.edited_region)
    telea_psnr = masked_psnr(telea.image, scene.background, telea.edited_region)
    assert pm_psnr >= 24.0  # measured ≈ 27 dB
    assert telea_psnr >= 17.0  # measured ≈ 20 dB: the texture is smeared, but no trace of the object is left
    assert pm_psnr >= telea_psnr + 3.0
    state = masked_state(scene)
    check = OBJECT_CHECKS["object_removal"]
    pm_q = check(None, REMOVE, state, state.with_output(pm), pm).quality  # type: ignore[arg-type]
    telea_q = check(None, REMOVE, state, state.with_output(telea), telea).quality  # type: ignore[arg-type]
    assert pm_q >= 0.8 > telea_q


def test_removal_region_is_dilated_mask(removals: dict) -> None:
    scene, out = removals["remove_telea", "flat"]
    assert np.array_equal(out.edited_region, dilate_mask(scene.mask, 3))


def test_removal_fails_when_mask_covers_everything() -> None:
    scene = make_object_scene("flat", "ellipse")
    state = EditState(scene.image, {"masks": (Mask(np.ones_like(scene.mask)),)})
    for tool_id in ("remove_patchmatch", "remove_telea"):
        with pytest.raises(ToolError, match="whole image"):
            run_tool(tool_id, state, REMOVE)


def test_patchmatch_runs_on_a_crop_of_a_large_image() -> None:
    # A small object in the corner of a larger textured image: PatchMatch fills from a crop around it, and the fill
    # must still land in the right place and beat Telea there.
    small = make_object_scene("texture", "ellipse", height=96, width=128, seed=3)
    background = make_background("texture", 288, 384, seed=3)
    mask = np.zeros(background.shape[:2], bool)
    mask[:96, :128] = small.mask
    image = background.copy()
    image[mask] = small.image[small.mask]
    state = EditState(image, {"masks": (Mask(mask),)})
    out = run_tool("remove_patchmatch", state, REMOVE)
    telea = run_tool("remove_telea", state, REMOVE)
    pm_psnr = masked_psnr(out.image, background, out.edited_region)
    assert pm_psnr >= 22.0  # measured ≈ 25 dB over seeds 0–5
    assert pm_psnr >= masked_psnr(telea.image, background, telea.edited_region) + 3.0  # Telea ≈ 20.6 dB
    assert np.array_equal(out.image[~out.edited_region], image[~out.edited_region])


def test_patchmatch_fills_large_holes_at_reduced_scale(removals: dict) -> None:
    # Above the hole-pixel budget the fill runs downsampled and is upsampled back: faster, still in place and textured.
    scene, _ = removals["remove_patchmatch", "texture"]
    state = masked_state(scene)
    tool = make_tool("remove_patchmatch")
    out = tool(state, REMOVE, {"dilate": 5, "patch_size": 7, "max_hole_px": 2_500})
    assert "working scale 0.5" in out.notes
    assert np.array_equal(out.image[~out.edited_region], scene.image[~out.edited_region])
    assert masked_psnr(out.image, scene.background, out.edited_region) >= 22.0  # measured ≈ 25 dB (full scale ≈ 27)
    verdict = OBJECT_CHECKS["object_removal"](None, REMOVE, state, state.with_output(out), out)  # type: ignore[arg-type]
    assert verdict.passed(0.8), verdict.reasons


# -------------------------------------------------------------------------------------------- segmentation


@pytest.mark.parametrize("background", BACKGROUNDS)
def test_grabcut_recovers_object_from_its_box(background: str) -> None:
    import cv2

    scene = make_object_scene(background, "ellipse", colour=(200, 60, 50), seed=3)  # type: ignore[arg-type]
    image = cv2.GaussianBlur(scene.image, (0, 0), 1.0)  # soft edges, as in a photo
    b = scene.box
    for box in (b, Box(b.x - 10, b.y - 10, b.w + 20, b.h + 20, label="object")):
        out = run_tool("grabcut_segment", EditState(image, {"boxes": (box,)}), SEGMENT)
        (mask,) = out.artifacts["masks"]
        assert iou(mask.data, scene.mask) >= 0.8
        state = EditState(image, {"boxes": (box,)})
        verdict = OBJECT_CHECKS["object_segmentation"](None, SEGMENT, state, state.with_output(out), out)  # type: ignore[arg-type]
        assert verdict.passed(0.8), verdict.reasons


def test_grabcut_fails_when_box_is_all_object_then_margin_retry_succeeds() -> None:
    # A rectangle filling its box exactly cannot be told apart from the box; the retry adds a margin.
    scene = make_object_scene("flat", "rectangle", colour=(200, 60, 50), seed=3)
    state = EditState(scene.image, {"boxes": (scene.box,)})
    with pytest.raises(ToolError, match="could not be separated"):
        run_tool("grabcut_segment", state, SEGMENT, attempt=0)
    out = run_tool("grabcut_segment", state, SEGMENT, attempt=1)
    assert iou(out.artifacts["masks"][0].data, scene.mask) >= 0.9


def test_grabcut_fails_on_empty_box_and_whole_image_box() -> None:
    scene = make_object_scene("flat", "ellipse")
    with pytest.raises(ToolError, match="no object"):
        run_tool("grabcut_segment", EditState(scene.image, {"boxes": (Box(5, 5, 40, 40),)}), SEGMENT)
    whole = Box(0, 0, scene.image.shape[1], scene.image.shape[0])
    with pytest.raises(ToolError, match="whole image"):
        run_tool("grabcut_segment", EditState(scene.image, {"boxes": (whole,)}), SEGMENT)


def test_box_mask_is_the_box() -> None:
    scene = make_object_scene("flat", "ellipse")
    boxes = (scene.box, Box(200, 150, 100, 100, label="cut", score=0.4))  # second runs off the image edge
    out = run_tool("box_mask", EditState(scene.image, {"boxes": boxes}), SEGMENT)
    first, second = out.artifacts["masks"]
    assert np.array_equal(first.data, scene.box.to_mask(*scene.mask.shape))
    assert second.area == 56 * 42 and second.label == "cut" and second.score == 0.4
    assert iou(first.data, scene.mask) < 0.9  # the crude mask includes the box's corners
