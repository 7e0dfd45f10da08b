"""Object checks and the shared pixel measurements: they pass good edits and, above all, fail bad ones."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from costa.checks import CheckContext
from costa.checks.common import (
    ciede2000_mean,
    shading_correlation,
    ssim_outside,
    ssim_quality,
    unchanged_outside,
)
from costa.checks.objects import OBJECT_ARTIFACT_CHECKS, OBJECT_CHECKS
from costa.masks import dilate_mask
from costa.synthetic.scenes import ObjectScene, make_object_scene
from costa.types import Box, EditState, Mask, Subtask, ToolOutput, Verdict

PINK = (255, 192, 203)
CTX: CheckContext = None  # type: ignore[assignment]  # object checks never read the OCR reader
RECOLOUR = Subtask(id="s1", kind="object_recoloration", target="object", result="pink")
REMOVE = Subtask(id="s1", kind="object_removal", target="object")
SEGMENT = Subtask(id="s1", kind="object_segmentation", target="object")
DETECT = Subtask(id="s1", kind="object_detection", target="object")


@pytest.fixture(scope="module")
def scene() -> ObjectScene:
    return make_object_scene("texture", "ellipse", seed=11)


def judge(kind: str, subtask: Subtask, before: EditState, output: ToolOutput) -> Verdict:
    return OBJECT_CHECKS[kind](CTX, subtask, before, before.with_output(output), output)


def masked(scene: ObjectScene) -> EditState:
    return EditState(scene.image, {"masks": (Mask(scene.mask),)})


def shaded_pink(scene: ObjectScene) -> np.ndarray:
    """A hand-made good recolouring: the object's own lightness profile, in pink."""
    from skimage.color import lab2rgb, rgb2lab

    lab = rgb2lab(scene.image)
    pink_lab = rgb2lab(np.array([[PINK]], float) / 255.0)[0, 0]
    l_obj = lab[..., 0][scene.mask]
    lab[..., 0][scene.mask] = l_obj - l_obj.mean() + pink_lab[0]
    lab[..., 1][scene.mask] = pink_lab[1]
    lab[..., 2][scene.mask] = pink_lab[2]
    out = scene.image.copy()
    out[scene.mask] = np.clip(np.rint(lab2rgb(lab) * 255), 0, 255).astype(np.uint8)[scene.mask]
    return out


# ----------------------------------------------------------------------------------------------- recolouring


def test_recoloration_passes_a_shaded_recolour(scene: ObjectScene) -> None:
    verdict = judge("object_recoloration", RECOLOUR, masked(scene), ToolOutput(image=shaded_pink(scene)))
    assert verdict.quality == 1.0, verdict.reasons
    assert any("ΔE2000" in r for r in verdict.reasons) and any("shading" in r for r in verdict.reasons)


def test_recoloration_fails_on_unchanged_image(scene: ObjectScene) -> None:
    verdict = judge("object_recoloration", RECOLOUR, masked(scene), ToolOutput(image=scene.image.copy()))
    assert verdict.quality == 0.0, verdict.reasons


def test_recoloration_fails_on_flat_fill_that_destroys_shading(scene: ObjectScene) -> None:
    flat = scene.image.copy()
    flat[scene.mask] = PINK
    verdict = judge("object_recoloration", RECOLOUR, masked(scene), ToolOutput(image=flat))
    assert verdict.quality == 0.0
    assert any("shading correlation 0.00" in r for r in verdict.reasons)


def test_recoloration_never_trusts_only_the_declared_region(scene: ObjectScene) -> None:
    good = shaded_pink(scene)
    bare = EditState(scene.image)
    # the tool's own claim is no evidence: with no grounded mask consumed or produced there is nothing to judge
    assert judge("object_recoloration", RECOLOUR, bare, ToolOutput(image=good, edited_region=scene.mask)).quality == 0
    from_output = ToolOutput(image=good, artifacts={"masks": (Mask(scene.mask),)})
    assert judge("object_recoloration", RECOLOUR, bare, from_output).quality == 1.0
    assert judge("object_recoloration", RECOLOUR, bare, ToolOutput(image=good)).quality == 0.0  # nowhere to look


def test_recoloration_fails_on_unknown_colour(scene: ObjectScene) -> None:
    plaid = Subtask(id="s1", kind="object_recoloration", result="plaid")
    assert judge("object_recoloration", plaid, masked(scene), ToolOutput(image=shaded_pink(scene))).quality == 0.0


def test_recoloration_of_a_flat_object_skips_shading() -> None:
    image = np.full((64, 64, 3), 200, np.uint8)
    mask = np.zeros((64, 64), bool)
    mask[16:48, 16:48] = True
    image[mask] = (0, 0, 255)
    out = image.copy()
    out[mask] = PINK
    verdict = judge("object_recoloration", RECOLOUR, EditState(image, {"masks": (Mask(mask),)}), ToolOutput(image=out))
    assert verdict.quality == 1.0 and any("no shading" in r for r in verdict.reasons)


# --------------------------------------------------------------------------------------------------- removal


def test_removal_passes_the_true_background(scene: ObjectScene) -> None:
    region = dilate_mask(scene.mask, 3)
    verdict = judge("object_removal", REMOVE, masked(scene), ToolOutput(image=scene.background, edited_region=region))
    assert verdict.quality == 1.0, verdict.reasons


def test_removal_fails_on_untouched_object(scene: ObjectScene) -> None:
    output = ToolOutput(image=scene.image.copy(), edited_region=dilate_mask(scene.mask, 3))
    verdict = judge("object_removal", REMOVE, masked(scene), output)
    assert verdict.quality == 0.0
    assert any("100% of the object's pixels unchanged" in r for r in verdict.reasons)


def test_removal_fails_when_half_the_object_is_left(scene: ObjectScene) -> None:
    half = scene.background.copy()
    left = scene.mask.copy()
    left[:, scene.image.shape[1] // 2 :] = False
    half[left] = scene.image[left]
    verdict = judge("object_removal", REMOVE, masked(scene), ToolOutput(image=half, edited_region=scene.mask))
    assert verdict.quality < 0.8, verdict.reasons


def test_removal_fails_on_a_wrong_coloured_fill(scene: ObjectScene) -> None:
    grey = scene.image.copy()
    grey[scene.mask] = (128, 128, 128)
    verdict = judge("object_removal", REMOVE, masked(scene), ToolOutput(image=grey, edited_region=scene.mask))
    assert verdict.quality < 0.8, verdict.reasons


def test_removal_penalises_a_smooth_smear_over_texture(scene: ObjectScene) -> None:
    smear = scene.image.copy()
    ring = dilate_mask(scene.mask, 8) & ~scene.mask
    smear[scene.mask] = np.rint(scene.background[ring].mean(axis=0)).astype(np.uint8)  # right colour, no texture
    verdict = judge("object_removal", REMOVE, masked(scene), ToolOutput(image=smear, edited_region=scene.mask))
    assert verdict.quality < 0.8
    assert any("texture" in r for r in verdict.reasons)


# ------------------------------------------------------------------------------------ segmentation, detection


def test_segmentation_accepts_a_true_mask_and_rejects_bad_ones(scene: ObjectScene) -> None:
    state = EditState(scene.image)

    def seg(*masks: np.ndarray) -> Verdict:
        return judge("object_segmentation", SEGMENT, state, ToolOutput(artifacts={"masks": tuple(map(Mask, masks))}))

    assert seg(scene.mask).quality == 1.0
    assert seg(np.zeros_like(scene.mask)).quality == 0.0
    assert seg(np.ones_like(scene.mask)).quality == 0.0
    two_blobs = np.zeros_like(scene.mask)
    two_blobs[20:60, 20:60] = True
    two_blobs[120:160, 180:220] = True
    assert seg(two_blobs).quality < 0.8  # largest piece holds only half
    assert seg(scene.mask, np.zeros_like(scene.mask)).quality == 0.0  # every mask must be good
    assert judge("object_segmentation", SEGMENT, state, ToolOutput()).quality == 0.0


def test_detection_needs_confident_sane_boxes(scene: ObjectScene) -> None:
    state = EditState(scene.image)

    def det(*boxes: Box) -> Verdict:
        return judge("object_detection", DETECT, state, ToolOutput(artifacts={"boxes": boxes}))

    assert det(scene.box).quality == 1.0
    assert det(Box(10, 10, 50, 50, score=0.25)).quality == pytest.approx(0.5)
    assert det().quality == 0.0
    assert det(Box(240, 180, 100, 100)).quality == 0.0  # mostly outside the 256×192 image
    assert det(Box(0, 0, 256, 192)).quality == 0.0  # the whole image locates nothing


def test_artifact_checks_bound_area_and_shape(scene: ObjectScene) -> None:
    state = EditState(scene.image)
    masks_check, boxes_check = OBJECT_ARTIFACT_CHECKS["masks"], OBJECT_ARTIFACT_CHECKS["boxes"]

    def run(check, name: str, value: tuple) -> float:  # type: ignore[no-untyped-def]
        output = ToolOutput(artifacts={name: value})
        return check(CTX, SEGMENT, state, state.with_output(output), output).quality

    tiny = np.zeros_like(scene.mask)
    tiny[0:3, 0:3] = True
    assert run(masks_check, "masks", (Mask(scene.mask),)) == 1.0
    assert run(masks_check, "masks", (Mask(tiny),)) == 0.0
    assert run(masks_check, "masks", (Mask(np.ones((10, 10), bool)),)) == 0.0  # wrong size
    assert run(masks_check, "masks", ()) == 0.0
    assert run(boxes_check, "boxes", (scene.box,)) == 1.0
    assert run(boxes_check, "boxes", (Box(0, 0, 2, 2),)) == 0.0
    assert run(boxes_check, "boxes", (Box(-5, -5, 300, 300),)) == 0.0


# ------------------------------------------------------------------------------------- shared measurements


def test_ssim_quality_mapping() -> None:
    assert ssim_quality(1.0) == 1.0
    assert ssim_quality(0.98) == 1.0
    assert ssim_quality(0.89) == pytest.approx(0.5)
    assert ssim_quality(0.8) == 0.0
    assert ssim_quality(0.3) == 0.0


def test_unchanged_outside_passes_edits_inside_the_region(scene: ObjectScene) -> None:
    edited = scene.image.copy()
    edited[scene.mask] = 0
    verdict = unchanged_outside(scene.image, edited, scene.mask)
    assert verdict.quality == 1.0
    assert ssim_outside(scene.image, edited, scene.mask) == 1.0


def test_unchanged_outside_fails_when_outside_pixels_change(scene: ObjectScene) -> None:
    rng = np.random.default_rng(0)
    damaged = scene.image.copy()
    damaged[~scene.mask] = np.clip(
        damaged[~scene.mask].astype(int) + rng.integers(-60, 60, damaged[~scene.mask].shape), 0, 255
    ).astype(np.uint8)
    verdict = unchanged_outside(scene.image, damaged, scene.mask)
    assert verdict.quality < 0.8
    assert "changed" in verdict.reasons[0]
    shifted = scene.image.copy()
    shifted[~scene.mask] //= 2  # a global darkening outside the object
    assert unchanged_outside(scene.image, shifted, scene.mask).quality < 0.8


def test_unchanged_outside_neutral_cases(scene: ObjectScene) -> None:
    bigger = np.repeat(np.repeat(scene.image, 2, axis=0), 2, axis=1)
    assert unchanged_outside(scene.image, bigger, None) == Verdict(1.0, ("size changed; outside check skipped",))
    darker = scene.image // 2
    no_region = unchanged_outside(scene.image, darker, None)
    assert no_region.quality == 1.0 and "whole-image SSIM" in no_region.reasons[0]
    everything = unchanged_outside(scene.image, darker, np.ones_like(scene.mask))
    assert everything.quality == 1.0 and "whole image" in everything.reasons[0]
    with pytest.raises(ValueError, match="region"):
        unchanged_outside(scene.image, darker, np.ones((3, 3), bool))


def test_ssim_outside_matches_full_image_computation(scene: ObjectScene) -> None:
    # The cropped computation must equal scikit-image on the whole image.
    from skimage.metrics import structural_similarity

    edited = scene.image.copy()
    edited[scene.mask] = 0
    edited[5:15, 5:25] = 255  # a stray change outside the region
    _, full = structural_similarity(scene.image, edited, channel_axis=2, data_range=255, full=True)
    outside = ~dilate_mask(scene.mask, 3, square=True)
    assert ssim_outside(scene.image, edited, scene.mask) == pytest.approx(full.mean(axis=2)[outside].mean(), abs=1e-9)


def test_colour_distance_and_shading_helpers(scene: ObjectScene) -> None:
    flat = scene.image.copy()
    flat[scene.mask] = PINK
    assert ciede2000_mean(flat, scene.mask, PINK) == pytest.approx(0.0, abs=1e-6)
    assert ciede2000_mean(scene.image, scene.mask, PINK) > 30
    assert shading_correlation(scene.image, scene.image, scene.mask) == pytest.approx(1.0)
    assert shading_correlation(scene.image, flat, scene.mask) == 0.0
    assert shading_correlation(flat, scene.image, scene.mask) is None  # a flat object has no shading to keep
    with pytest.raises(ValueError, match="empty"):
        ciede2000_mean(scene.image, np.zeros_like(scene.mask), PINK)


def test_check_modules_import_without_heavy_libraries() -> None:
    code = (
        "import sys, costa.checks.objects, costa.checks.common, costa.colours, costa.masks;"
        "heavy = [m for m in ('cv2', 'skimage', 'scipy', 'torch') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""


def test_check_step_combines_recolour_check_with_unchanged_outside(scene: ObjectScene) -> None:
    from costa.checks import check_step
    from costa.types import SubtaskSpec

    spec = SubtaskSpec("object_recoloration", "Object Recoloration", "image", True, "recolour the target")
    before = masked(scene)
    good = ToolOutput(image=shaded_pink(scene), edited_region=scene.mask)
    assert check_step(CTX, spec, RECOLOUR, ("image",), before, before.with_output(good), good).quality == 1.0
    spilled = shaded_pink(scene)
    spilled[~scene.mask] = spilled[~scene.mask] // 2  # right object colour, but the rest of the image darkened
    bad = ToolOutput(image=spilled, edited_region=scene.mask)
    verdict = check_step(CTX, spec, RECOLOUR, ("image",), before, before.with_output(bad), bad)
    assert verdict.quality < 0.8
    assert any("outside the edited region" in r for r in verdict.reasons)
    masks_out = ToolOutput(artifacts={"masks": (Mask(scene.mask),)})
    step = check_step(CTX, spec, RECOLOUR, ("masks",), before, before.with_output(masks_out), masks_out)
    assert step.quality == 1.0  # an intermediate mask step is judged by the masks artifact check
