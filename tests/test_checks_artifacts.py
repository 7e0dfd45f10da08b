"""Artifacts a person would see fail their checks: mirrored or cloned margins, smeared or seamed fills, clipping.

Each "fails" case here scored 1.00 before these measures (the reflect outpainter's mirrored letters passed every
outpainting measure). Images are generated; the outpainting tools are the real embedded ones.
"""

from __future__ import annotations

import numpy as np
import pytest

from costa.checks import CheckContext
from costa.checks.artifacts import clipping_verdict, margin_stats
from costa.checks.fills import removal_artifacts
from costa.checks.image import check_adjustment, check_outpainting
from costa.tables import load_tables
from costa.tools.outpaint import ReflectOutpainter
from costa.types import EditState, Subtask, ToolOutput
from tests.text_helpers import Line, background, draw, shared_reader

THRESHOLD = 0.8
WIDE = Subtask(id="o", kind="outpainting", result="16:9")


def sign_to_the_edges() -> np.ndarray:
    """A sign photographed close: the word runs almost to the left and right edges."""
    img = background("noise", 300, 200, (240, 236, 226))
    return draw(img, [Line("SALE", (14, 50), 96, (200, 25, 25))])


def plain_wall() -> np.ndarray:
    return background("gradient", 300, 200, (180, 170, 160))


@pytest.fixture(scope="module")
def ctx() -> CheckContext:
    return CheckContext(reader=shared_reader())


def reflect(image: np.ndarray) -> ToolOutput:
    spec = load_tables().tools["reflect_outpaint"]
    return ReflectOutpainter(spec)(EditState(image), WIDE, spec.params_for_attempt(0))


def test_reflected_margins_next_to_a_sign_fail(ctx: CheckContext) -> None:
    image = sign_to_the_edges()
    out = reflect(image)
    before = EditState(image)
    verdict = check_outpainting(ctx, WIDE, before, before.with_output(out), out)
    assert verdict.quality < THRESHOLD, verdict
    assert any("mirrored or copied" in r for r in verdict.reasons), verdict.reasons


def test_reflected_margins_of_a_plain_wall_pass(ctx: CheckContext) -> None:
    image = plain_wall()
    out = reflect(image)
    before = EditState(image)
    verdict = check_outpainting(ctx, WIDE, before, before.with_output(out), out)
    assert verdict.quality >= THRESHOLD, verdict


def test_a_cloned_letter_in_a_margin_is_found() -> None:
    image = sign_to_the_edges()
    h, w = image.shape[:2]
    canvas = np.full((h, w + 120, 3), 238, np.uint8)
    canvas[:, 60 : 60 + w] = image
    canvas[:, :60] = image[:, 60:120]  # a straight copy (a patch fill that cloned part of the word)
    stats = margin_stats(canvas, 60, 0, h, w, "left", 60)
    assert stats.cloned >= 0.5, stats


def _textured(h: int = 120, w: int = 160) -> np.ndarray:
    rng = np.random.default_rng(3)
    grain = rng.normal(0, 22, (h, w, 1))
    return np.clip(128 + grain + np.zeros((h, w, 3)), 0, 255).astype(np.uint8)


def test_removal_smear_and_seam_fail_and_a_true_fill_passes() -> None:
    truth = _textured()
    hole = np.zeros(truth.shape[:2], bool)
    hole[40:80, 50:110] = True
    assert removal_artifacts(truth, hole).quality == 1.0  # the true background: nothing to see
    smeared = truth.copy()
    smeared[hole] = 128  # flat grey over grain: a smear
    bad = removal_artifacts(smeared, hole)
    assert bad.quality < THRESHOLD and "smear" in " ".join(bad.reasons), bad
    flat = np.full_like(truth, 120)
    seamed = flat.copy()
    seamed[hole] = 170  # a fill of the wrong tone: its outline is a step
    seam = removal_artifacts(seamed, hole)
    assert seam.quality < THRESHOLD and "seam" in " ".join(seam.reasons), seam


def test_brightening_that_crushes_shadows_fails(ctx: CheckContext) -> None:
    rng = np.random.default_rng(0)
    image = np.clip(rng.normal(110, 45, (120, 160, 3)), 20, 235).astype(np.uint8)
    lifted = np.clip(image.astype(int) + 15, 0, 255).astype(np.uint8)
    crushed = lifted.copy()
    luma = image.mean(axis=2)
    crushed[luma <= np.quantile(luma, 0.02)] = 0  # brighter on average, but the darkest 2 % crushed to black
    ask = Subtask(id="b", kind="global_adjustment", result="brighter")
    before = EditState(image)
    for result, passes in ((lifted, True), (crushed, False)):
        out = ToolOutput(image=result, edited_region=None)
        verdict = check_adjustment(ctx, ask, before, before.with_output(out), out)
        assert (verdict.quality >= THRESHOLD) is passes, verdict
    assert clipping_verdict(image, crushed, None, False, True)[0][0] < THRESHOLD  # shadows: not asked for
    assert clipping_verdict(image, crushed, None, True, False)[0][0] == 1.0  # "darker" may crush 2 %


UP = Subtask(id="u", kind="outpainting", params={"direction": "upwards"})


def _scene_extended_upwards(kind: str) -> tuple[np.ndarray, np.ndarray, int]:
    """A true scene (a larger shaded or grainy wall) and its lower part as the photo, a line of text near the photo's
    top edge (30 px below it, beyond the band whose colours a margin may continue): the scene itself is a correct
    extension upwards (as in bench task 10, where the plain mean gradient of
    the band with the letters made the clean fill look like a smear)."""
    from costa.tools.outpaint import outpaint_margins

    h, w = 200, 300
    top = outpaint_margins(h, w, None, UP.params).top
    scene = background(kind, w, h + top, (120, 60, 170))
    scene[top:] = draw(scene[top:], [Line("BIKES PHARMACY", (20, 30), 30, (90, 230, 60))])
    return scene[top:].copy(), scene, top


@pytest.mark.parametrize("kind", ["gradient", "noise"])
def test_a_true_extension_beside_text_at_the_seam_passes(ctx: CheckContext, kind: str) -> None:
    photo, scene, _ = _scene_extended_upwards(kind)
    before = EditState(photo)
    out = ToolOutput(image=scene)
    verdict = check_outpainting(ctx, UP, before, before.with_output(out), out)
    assert verdict.quality >= THRESHOLD, verdict.reasons


def test_letter_fragments_pasted_into_a_plain_margin_fail(ctx: CheckContext) -> None:
    """Pieces of strokes (no whole letter, so no block is an exact clone and OCR reads nothing) in the letters' own
    green, in an extension of a plain wall: a person sees them at once (bench task 19's PatchMatch fill)."""
    photo, scene, top = _scene_extended_upwards("gradient")
    canvas = scene.copy()
    canvas[: top // 3, 40:44] = (90, 230, 60)  # a vertical stroke
    canvas[4:9, 120:230:9] = (90, 230, 60)  # a row of stubs along the outer edge
    before = EditState(photo)
    out = ToolOutput(image=canvas)
    verdict = check_outpainting(ctx, UP, before, before.with_output(out), out)
    assert verdict.quality < THRESHOLD, verdict.reasons
    assert any("pasted into the extension" in r for r in verdict.reasons), verdict.reasons


def test_a_fill_pasted_from_elsewhere_in_the_image_fails_and_a_continued_panel_passes() -> None:
    """A purple-to-blue gradient panel inside green foliage: filling a hole in the panel with the panel's own
    gradient passes; filling it with foliage (what PatchMatch did to a sign in bench reflection task 14) fails."""
    from costa.checks.fills import copied_into_fill

    rng = np.random.default_rng(0)
    h, w = 200, 320
    image = np.zeros((h, w, 3), np.uint8)
    image[..., 1] = rng.integers(90, 200, (h, w))  # foliage: greens
    image[..., 0] = rng.integers(20, 80, (h, w))
    image[..., 2] = rng.integers(10, 60, (h, w))
    ramp = np.linspace(0.0, 1.0, 240)[None, :, None]
    panel = (np.array([40, 60, 160]) * (1 - ramp) + np.array([150, 30, 110]) * ramp).astype(np.uint8)
    image[40:100, 40:280] = np.repeat(panel, 60, axis=0)
    hole = np.zeros((h, w), bool)
    hole[55:85, 70:250] = True
    assert copied_into_fill(image, hole)[0] == 1.0  # the panel continued through the hole
    pasted = image.copy()
    pasted[55:85, 70:250] = image[130:160, 70:250]  # foliage from below the sign
    q, reason = copied_into_fill(pasted, hole)
    assert q == 0.0 and "pasted in" in reason, reason
    assert copied_into_fill(image, np.zeros((h, w), bool)) is None


def test_a_removal_fill_pasted_from_elsewhere_in_a_photo_fails_its_check_and_the_true_background_passes(
    ctx: CheckContext,
) -> None:
    """scikit-image's coffee: a hole beside the cup, where the surroundings differ from side to side. Filled with a
    verbatim copy of the table's corner (what PatchMatch did with street signs in a road) the removal check fails on
    `pasted_content`; filled with what is really there it passes that measure. At 1600 px and below the measure works
    at full resolution, so a copy pasted there is not blurred out of sight by a working scale."""
    from skimage import data

    from costa.checks.fills import PASTED_SIDE_PX, pasted_content, surround_variation
    from costa.checks.objects import check_removal
    from costa.types import Mask

    photo = data.coffee()
    hole = np.zeros(photo.shape[:2], bool)
    hole[150:230, 330:420] = True
    assert (surround_variation(photo, hole) or 0.0) > 3.7 and max(photo.shape) <= PASTED_SIDE_PX
    assert pasted_content(photo, photo, hole).quality == 1.0  # the true background: nothing copied
    pasted = photo.copy()
    pasted[150:230, 330:420] = photo[20:100, 30:120]
    verdict = pasted_content(photo, pasted, hole)
    assert verdict.quality == 0.0 and "pasted in" in verdict.reasons[0]
    before = EditState(photo, {"masks": (Mask(hole, "user brush"),)})
    sub = Subtask(id="s1", kind="object_removal", target="spoon")
    out = ToolOutput(image=pasted, edited_region=hole)
    removal = check_removal(ctx, sub, before, before.with_output(out), out)
    assert removal.quality == 0.0 and any("verbatim copies" in r for r in removal.reasons)
