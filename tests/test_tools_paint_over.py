"""`text_paint_over`: the paper's cheap text removal, judged honestly by the real text-removal check (real OCR)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from costa.checks import CheckContext
from costa.checks.text import TEXT_CHECKS
from costa.errors import ToolError
from costa.tools.ocr import RapidOcrDetector
from costa.tools.text_removal import PaintOverTextRemover
from costa.types import EditState, Subtask
from tests.text_helpers import shared_reader, sign, tool_spec

THRESHOLD = 0.8  # the search's pass threshold
REMOVE_SALE = Subtask(id="x", kind="text_removal", target="SALE")


@pytest.fixture(scope="module")
def ctx() -> CheckContext:
    return CheckContext(reader=shared_reader())


def _detected(ctx: CheckContext, kind: str) -> EditState:
    detector = RapidOcrDetector(tool_spec("rapidocr_detect"), reader=ctx.reader)
    state = EditState(sign(kind))
    return state.with_output(detector(state, Subtask(id="d", kind="text_detection"), {}))


def _run(before: EditState, subtask: Subtask = REMOVE_SALE):
    return PaintOverTextRemover(tool_spec("text_paint_over"))(before, subtask, {})


def test_paint_over_passes_on_a_flat_background(ctx: CheckContext) -> None:
    before = _detected(ctx, "flat")
    out = _run(before)
    assert out.image is not None and out.edited_region is not None
    changed = (out.image != before.image).any(axis=2)
    assert changed.any() and not (changed & ~out.edited_region).any()  # only the painted boxes changed
    ys, xs = np.nonzero(out.edited_region)
    patch = out.image[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    assert len(np.unique(patch.reshape(-1, 3), axis=0)) == 1  # one flat colour
    verdict = TEXT_CHECKS["text_removal"](ctx, REMOVE_SALE, before, before.with_output(out), out)
    assert verdict.quality >= THRESHOLD, verdict


@pytest.mark.parametrize("kind", ["gradient", "noise"])
def test_paint_over_fails_the_check_on_shaded_or_textured_backgrounds(ctx: CheckContext, kind: str) -> None:
    before = _detected(ctx, kind)
    out = _run(before)
    verdict = TEXT_CHECKS["text_removal"](ctx, REMOVE_SALE, before, before.with_output(out), out)
    assert verdict.quality < THRESHOLD, verdict


def test_paint_over_needs_regions_and_a_match(ctx: CheckContext) -> None:
    with pytest.raises(ToolError, match="text detection must run"):
        _run(EditState(sign("flat")))
    with pytest.raises(ToolError, match="no text matching 'ZEBRA'"):
        _run(_detected(ctx, "flat"), Subtask(id="x", kind="text_removal", target="ZEBRA"))


def test_the_true_background_in_the_same_boxes_passes_on_a_gradient(ctx: CheckContext) -> None:
    """The shading measure fails a flat patch, not a fill that carries the ramp on (the sign's own background)."""
    from tests.text_helpers import background

    before = _detected(ctx, "gradient")
    painted = _run(before)
    assert painted.edited_region is not None
    region = painted.edited_region
    truth = np.where(region[..., None], background("gradient"), before.image)
    out = dataclasses.replace(painted, image=truth)
    verdict = TEXT_CHECKS["text_removal"](ctx, REMOVE_SALE, before, before.with_output(out), out)
    assert verdict.quality >= THRESHOLD, verdict
