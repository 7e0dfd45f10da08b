"""The text checks pass good results of the real tools and fail bad ones, reading back with the real OCR engine."""

from __future__ import annotations

import numpy as np
import pytest

from costa.checks import CheckContext, check_step
from costa.checks.text import TEXT_ARTIFACT_CHECKS, TEXT_CHECKS
from costa.tools.ocr import RapidOcrDetector, RapidOcrExtractor, RapidOcrReader
from costa.tools.text_edit import KeywordHighlighter, PillowTextReplacer, PillowTextWriter, TextRedactor
from costa.tools.text_removal import TeleaTextRemover
from costa.types import EditState, Subtask, TextRegion, ToolOutput, Verdict
from tests.text_helpers import background, shared_reader, sign, tool_spec

THRESHOLD = 0.8  # the tables' quality threshold


@pytest.fixture(scope="module")
def reader() -> RapidOcrReader:
    return shared_reader()


@pytest.fixture(scope="module")
def ctx(reader: RapidOcrReader) -> CheckContext:
    return CheckContext(reader=reader)


@pytest.fixture(scope="module")
def signs(reader: RapidOcrReader) -> dict[str, EditState]:
    """The test sign on each background, with its detected text regions (as the editing tools receive it)."""
    detector = RapidOcrDetector(tool_spec("rapidocr_detect"), reader=reader)
    out: dict[str, EditState] = {}
    for kind in ("flat", "noise"):
        state = EditState(sign(kind))
        out[kind] = state.with_output(detector(state, Subtask(id="d", kind="text_detection"), {}))
    return out


def check(ctx: CheckContext, subtask: Subtask, before: EditState, output: ToolOutput) -> Verdict:
    verdict = TEXT_CHECKS[subtask.kind](ctx, subtask, before, before.with_output(output), output)
    assert 0.0 <= verdict.quality <= 1.0 and verdict.reasons and all(isinstance(r, str) for r in verdict.reasons)
    return verdict


def image_output(image: np.ndarray) -> ToolOutput:
    return ToolOutput(image=image, edited_region=None)


def test_every_text_subtask_in_the_tables_has_a_check() -> None:
    from costa.tables import load_tables

    subtasks = load_tables().subtasks
    text_kinds = {"text_extraction", "text_replacement", "text_removal", "text_addition", "text_redaction"}
    text_kinds |= {"keyword_highlighting", "text_detection"}
    assert text_kinds <= set(subtasks)
    assert set(TEXT_CHECKS) == text_kinds
    assert set(TEXT_ARTIFACT_CHECKS) == {"text_regions"}


# ---------------------------------------------------------------------------------------------------- replacement

REPLACE = Subtask(id="r", kind="text_replacement", target="SALE", result="OPEN")


@pytest.mark.parametrize("kind", ["flat", "noise"])
def test_replacement_passes_when_ocr_reads_the_new_text(
    kind: str, ctx: CheckContext, signs: dict[str, EditState]
) -> None:
    before = signs[kind]
    out = PillowTextReplacer(tool_spec("text_replace_pillow"))(before, REPLACE, {"margin": 2})
    verdict = check(ctx, REPLACE, before, out)
    assert verdict.quality >= THRESHOLD, verdict
    assert "OPEN" in verdict.reasons[0]


def test_replacement_fails_on_an_unchanged_image(ctx: CheckContext, signs: dict[str, EditState]) -> None:
    before = signs["flat"]
    verdict = check(ctx, REPLACE, before, image_output(before.image.copy()))
    assert verdict.quality == 0.0 and "unchanged" in verdict.reasons[0]


def test_replacement_fails_when_the_new_text_is_written_elsewhere_and_the_old_stays(
    ctx: CheckContext, signs: dict[str, EditState]
) -> None:
    before = signs["flat"]
    add = Subtask(id="a", kind="text_addition", result="OPEN", params={"position": (300, 170)})
    out = PillowTextWriter(tool_spec("text_add_pillow"))(before, add, {"size": 24})
    verdict = check(ctx, REPLACE, before, out)
    assert verdict.quality < THRESHOLD
    assert any("'SALE' is still readable" in r for r in verdict.reasons)


def test_replacement_fails_when_the_wrong_text_was_written(ctx: CheckContext, signs: dict[str, EditState]) -> None:
    before = signs["flat"]
    wrong = Subtask(id="r", kind="text_replacement", target="SALE", result="KWYZ")
    out = PillowTextReplacer(tool_spec("text_replace_pillow"))(before, wrong, {"margin": 2})
    assert check(ctx, REPLACE, before, out).quality < THRESHOLD


# -------------------------------------------------------------------------------------------------------- removal

REMOVE_SALE = Subtask(id="x", kind="text_removal", target="SALE")


def test_removal_passes_when_nothing_is_left(ctx: CheckContext, signs: dict[str, EditState]) -> None:
    before = signs["noise"]
    out = TeleaTextRemover(tool_spec("text_remove_telea"))(before, REMOVE_SALE, {"radius": 3, "dilate": 2})
    verdict = check(ctx, REMOVE_SALE, before, out)
    assert verdict.quality >= THRESHOLD, verdict


def test_removal_of_all_text_passes(ctx: CheckContext, signs: dict[str, EditState]) -> None:
    before = signs["flat"]
    everything = Subtask(id="x", kind="text_removal")
    out = TeleaTextRemover(tool_spec("text_remove_telea"))(before, everything, {"radius": 3, "dilate": 2})
    assert check(ctx, everything, before, out).quality >= THRESHOLD


@pytest.mark.parametrize("kind", ["flat", "noise"])
def test_removal_fails_on_half_erased_text(kind: str, ctx: CheckContext, signs: dict[str, EditState]) -> None:
    before = signs[kind]
    good = TeleaTextRemover(tool_spec("text_remove_telea"))(before, REMOVE_SALE, {"radius": 3, "dilate": 2})
    xs = np.nonzero(good.edited_region)[1]
    left_half = good.edited_region.copy()
    left_half[:, (int(xs.min()) + int(xs.max())) // 2 :] = False
    half = before.image.copy()
    half[left_half] = good.image[left_half]
    verdict = check(ctx, REMOVE_SALE, before, ToolOutput(image=half, edited_region=good.edited_region))
    assert verdict.quality < THRESHOLD, verdict


def test_removal_fails_on_an_unchanged_image(ctx: CheckContext, signs: dict[str, EditState]) -> None:
    before = signs["flat"]
    verdict = check(ctx, REMOVE_SALE, before, image_output(before.image.copy()))
    assert verdict.quality == 0.0


# ------------------------------------------------------------------------------------------------------ redaction

REDACT = Subtask(id="x", kind="text_redaction", target="phone number")


def test_redaction_passes_when_covered(ctx: CheckContext, signs: dict[str, EditState]) -> None:
    before = signs["noise"]
    out = TextRedactor(tool_spec("text_redact_box"))(before, REDACT, {"pad": 2})
    assert check(ctx, REDACT, before, out).quality == 1.0


def test_redaction_fails_when_only_half_covered(ctx: CheckContext, signs: dict[str, EditState]) -> None:
    before = signs["flat"]
    good = TextRedactor(tool_spec("text_redact_box"))(before, REDACT, {"pad": 2})
    xs = np.nonzero(good.edited_region)[1]
    half = before.image.copy()
    cover = good.edited_region.copy()
    cover[:, (int(xs.min()) + int(xs.max())) // 2 :] = False
    half[cover] = 0
    verdict = check(ctx, REDACT, before, ToolOutput(image=half, edited_region=good.edited_region))
    assert verdict.quality < THRESHOLD and "covered" in verdict.reasons[0]


def test_redaction_fails_when_the_box_is_see_through(ctx: CheckContext, signs: dict[str, EditState]) -> None:
    before = signs["flat"]
    marker = Subtask(id="x", kind="keyword_highlighting", target="phone number")
    out = KeywordHighlighter(tool_spec("keyword_highlight"))(before, marker, {"alpha": 0.4})
    verdict = check(ctx, REDACT, before, out)
    assert verdict.quality < THRESHOLD
    assert any("still reads" in r for r in verdict.reasons)


# --------------------------------------------------------------------------------------------------- highlighting

HIGHLIGHT = Subtask(id="x", kind="keyword_highlighting", target="SALE")


def test_highlight_passes_when_tinted_and_legible(ctx: CheckContext, signs: dict[str, EditState]) -> None:
    before = signs["noise"]
    out = KeywordHighlighter(tool_spec("keyword_highlight"))(before, HIGHLIGHT, {"alpha": 0.4})
    assert check(ctx, HIGHLIGHT, before, out).quality == 1.0


def test_highlight_fails_when_opaque_or_on_the_wrong_word(ctx: CheckContext, signs: dict[str, EditState]) -> None:
    before = signs["flat"]
    tool = KeywordHighlighter(tool_spec("keyword_highlight"))
    good = tool(before, HIGHLIGHT, {"alpha": 0.4})
    opaque = before.image.copy()
    opaque[good.edited_region] = (255, 230, 0)  # a marker that hides the word
    verdict = check(ctx, HIGHLIGHT, before, ToolOutput(image=opaque, edited_region=good.edited_region))
    assert verdict.quality < THRESHOLD and "legible" in verdict.reasons[0]
    wrong = tool(before, Subtask(id="x", kind="keyword_highlighting", target="TODAY"), {"alpha": 0.4})
    assert check(ctx, HIGHLIGHT, before, wrong).quality < THRESHOLD


def test_highlight_fails_on_an_unchanged_image(ctx: CheckContext, signs: dict[str, EditState]) -> None:
    before = signs["flat"]
    verdict = check(ctx, HIGHLIGHT, before, image_output(before.image.copy()))
    assert verdict.quality < THRESHOLD and "tinted" in verdict.reasons[0]


# ------------------------------------------------------------------------------------------------------- addition

ADD = Subtask(id="x", kind="text_addition", result="Grand Opening")


def test_addition_passes_when_ocr_reads_it_and_fails_otherwise(ctx: CheckContext) -> None:
    before = EditState(background("gradient", 360, 200))
    tool = PillowTextWriter(tool_spec("text_add_pillow"))
    good = tool(before, ADD, {"size": 0})
    assert check(ctx, ADD, before, good).quality == 1.0
    wrong = tool(before, Subtask(id="x", kind="text_addition", result="Closed Today"), {"size": 0})
    assert check(ctx, ADD, before, wrong).quality < THRESHOLD
    assert check(ctx, ADD, before, image_output(before.image.copy())).quality == 0.0


# ---------------------------------------------------------------------------------------- detection and extraction


def test_text_regions_check_scores_matches_and_names_a_missing_target(
    ctx: CheckContext, signs: dict[str, EditState]
) -> None:
    state = signs["flat"]
    found = ToolOutput(artifacts={"text_regions": state.artifacts["text_regions"]})
    good = TEXT_ARTIFACT_CHECKS["text_regions"](ctx, REPLACE, EditState(state.image), state, found)
    assert good.quality >= 0.9 and "'SALE'" in good.reasons[0]
    absent = Subtask(id="x", kind="text_redaction", target="email")
    missing = TEXT_ARTIFACT_CHECKS["text_regions"](ctx, absent, EditState(state.image), state, found)
    assert missing.quality == 0.0 and "'email'" in missing.reasons[0] and "BIG SALE TODAY" in missing.reasons[0]
    detect = Subtask(id="x", kind="text_detection")
    empty = ToolOutput(artifacts={"text_regions": ()})
    assert (
        TEXT_CHECKS["text_detection"](ctx, detect, EditState(state.image), EditState(state.image), empty).quality == 0
    )
    weak = (TextRegion(state.artifacts["text_regions"][0].box, "BIG SALE TODAY", 0.5),)
    low = TEXT_CHECKS["text_detection"](ctx, detect, state, state, ToolOutput(artifacts={"text_regions": weak}))
    assert low.quality == pytest.approx(0.5)


def test_extraction_check(ctx: CheckContext, reader: RapidOcrReader, signs: dict[str, EditState]) -> None:
    state = EditState(signs["flat"].image)
    extract = Subtask(id="x", kind="text_extraction", target="phone number")
    tool = RapidOcrExtractor(tool_spec("rapidocr_read"), reader=reader)
    good = tool(state, extract, {"box_thresh": 0.5, "upscale": 1})
    assert check(ctx, extract, state, good).quality >= THRESHOLD
    assert check(ctx, extract, state, ToolOutput(artifacts={"text": "  "})).quality == 0.0
    assert check(ctx, extract, state, ToolOutput(artifacts={"text": "hello there"})).quality < THRESHOLD


def test_dispatcher_combines_the_text_check_with_unchanged_outside(
    ctx: CheckContext, signs: dict[str, EditState]
) -> None:
    from costa.tables import load_tables

    spec = load_tables().subtasks["text_redaction"]
    before = signs["flat"]
    out = TextRedactor(tool_spec("text_redact_box"))(before, REDACT, {"pad": 2})
    good = check_step(ctx, spec, REDACT, ("image",), before, before.with_output(out), out)
    assert good.quality >= THRESHOLD
    damaged = out.image.copy()
    damaged[:30] = 255 - damaged[:30]  # the tool also wrecked the top of the image
    bad = ToolOutput(image=damaged, edited_region=out.edited_region)
    assert check_step(ctx, spec, REDACT, ("image",), before, before.with_output(bad), bad).quality < THRESHOLD
