"""The text tools, run for real on generated signs and read back with the real OCR engine."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from costa.errors import InputError, ToolError, ToolUnavailableError
from costa.glyphs import estimate_background, glyph_mask, match_box
from costa.textmatch import find_matches, match_score, normalise_text
from costa.tools.base import Tool
from costa.tools.ocr import RapidOcrDetector, RapidOcrExtractor, RapidOcrReader
from costa.tools.text_edit import (
    InpaintTextReplacer,
    KeywordHighlighter,
    PillowTextReplacer,
    PillowTextWriter,
    TextRedactor,
)
from costa.tools.text_removal import PatchMatchTextRemover, TeleaTextRemover
from costa.types import TURN_ARTIFACTS, Box, EditState, Requirements, Subtask, TextRegion, ToolOutput, ToolSpec
from tests.text_helpers import Line, background, draw, font, shared_reader, sign, tool_spec

KINDS = ("flat", "gradient", "noise")


@pytest.fixture(scope="module")
def reader() -> RapidOcrReader:
    return shared_reader()


@pytest.fixture(scope="module")
def detector(reader: RapidOcrReader) -> RapidOcrDetector:
    return RapidOcrDetector(tool_spec("rapidocr_detect"), reader=reader)


@pytest.fixture(scope="module")
def detected(detector: RapidOcrDetector) -> Callable[[np.ndarray], EditState]:
    """Run the detector once per distinct image and return the state with its text regions."""
    cache: dict[bytes, EditState] = {}

    def run(image: np.ndarray) -> EditState:
        key = image.tobytes() + bytes(str(image.shape), "ascii")
        if key not in cache:
            state = EditState(image)
            params = detector.spec.params_for_attempt(0)
            cache[key] = state.with_output(detector(state, Subtask(id="d", kind="text_detection"), params))
        return cache[key]

    return run


def texts(reader: RapidOcrReader, image: np.ndarray) -> list[str]:
    return [r.text for r in reader.read(image)]


def unchanged_outside(before: np.ndarray, out: ToolOutput) -> bool:
    assert out.image is not None and out.edited_region is not None
    assert out.edited_region.dtype == bool and out.edited_region.shape == before.shape[:2]
    return bool(np.array_equal(out.image[~out.edited_region], before[~out.edited_region]))


def replace(target: str | None, result: str | None) -> Subtask:
    return Subtask(id="r", kind="text_replacement", target=target, result=result)


# ------------------------------------------------------------------------------------------------------------- OCR


def test_reader_reads_lines_with_boxes_scores_and_polygons(reader: RapidOcrReader) -> None:
    image = sign("flat")
    regions = reader.read(image)
    assert [r.text for r in regions] == ["BIG SALE TODAY", "Call 555-123-4567"]
    left, top, right, bottom = font(32).getbbox("BIG SALE TODAY")
    top_line = regions[0].box
    assert abs(top_line.x - (24 + left)) <= 4 and abs(top_line.x2 - (24 + right)) <= 4
    assert top_line.y <= 40 + top and top_line.y2 >= 40 + bottom - 1
    for r in regions:
        assert 0.9 < r.score <= 1.0 and len(r.polygon) == 4
        assert r.box.x2 <= image.shape[1] and r.box.y2 <= image.shape[0]


def test_reader_finds_nothing_on_a_blank_image_and_the_detector_says_so(
    reader: RapidOcrReader, detector: RapidOcrDetector
) -> None:
    blank = background("flat", 200, 100)
    assert reader.read(blank) == ()
    with pytest.raises(ToolError, match="no text found"):
        detector(EditState(blank), Subtask(id="d", kind="text_detection"), {"box_thresh": 0.5, "upscale": 1})


def test_reader_rejects_bad_input() -> None:
    r = RapidOcrReader()
    with pytest.raises(InputError, match="RGB uint8"):
        r.read(np.zeros((10, 10), dtype=np.uint8))
    with pytest.raises(InputError, match="box_thresh"):
        r.read(np.zeros((10, 10, 3), dtype=np.uint8), box_thresh=1.5)
    with pytest.raises(InputError, match="upscale"):
        RapidOcrReader(upscale=0.5)
    assert r._engine is None  # validation happens before the engine is built


def test_one_engine_is_shared_by_tools_and_reads(reader: RapidOcrReader, detector: RapidOcrDetector) -> None:
    engine = reader._engine
    extractor = RapidOcrExtractor(tool_spec("rapidocr_read"), reader=reader)
    extractor.ensure_loaded()
    assert detector.reader is reader and extractor.reader is reader
    assert reader._engine is engine is not None


def test_upscaled_reads_map_boxes_back_to_the_original_image(reader: RapidOcrReader) -> None:
    image = draw(background("flat", 360, 200), [Line("tiny print here", (200, 150), 9, (30, 30, 30), False)])
    regions = reader.read(image, upscale=2)
    hits = [r for r in regions if match_score(r.text, "tiny print here") >= 0.8]
    assert hits, [r.text for r in regions]
    box = hits[0].box
    assert 190 <= box.x <= 210 and 142 <= box.y <= 162 and box.x2 <= 360


def test_large_images_are_read_at_reduced_size_in_original_coordinates(reader: RapidOcrReader) -> None:
    image = draw(background("flat", 1500, 700), [Line("WELCOME HOME", (900, 500), 64)])
    regions = reader.read(image)
    assert [r.text for r in regions] == ["WELCOME HOME"]
    assert abs(regions[0].box.x - 900) <= 10 and abs(regions[0].box.y - 512) <= 16


def test_extractor_reads_in_reading_order_and_restricts_to_the_target(reader: RapidOcrReader) -> None:
    tool = RapidOcrExtractor(tool_spec("rapidocr_read"), reader=reader)
    image = draw(
        background("flat", 420, 200),
        [Line("world", (240, 30), 28), Line("hello", (30, 34), 28), Line("Call 555-123-4567", (30, 120), 22)],
    )
    state = EditState(image)
    params = tool.spec.params_for_attempt(0)
    everything = tool(state, Subtask(id="x", kind="text_extraction"), params)
    assert everything.artifacts["text"] == "hello world\nCall 555-123-4567"
    assert everything.image is None
    phone = tool(state, Subtask(id="x", kind="text_extraction", target="phone number"), params)
    assert phone.artifacts["text"] == "555-123-4567"
    with pytest.raises(ToolError, match=r"'email'.*hello"):
        tool(state, Subtask(id="x", kind="text_extraction", target="email"), params)


# ---------------------------------------------------------------------------------------------------- replacement


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("tool_cls", [PillowTextReplacer, InpaintTextReplacer])
def test_replace_sale_with_open_reads_open_and_not_sale(
    kind: str, tool_cls: type, reader: RapidOcrReader, detected: Callable[[np.ndarray], EditState]
) -> None:
    state = detected(sign(kind))
    tool_id = "text_replace_pillow" if tool_cls is PillowTextReplacer else "text_replace_inpaint"
    tool = tool_cls(tool_spec(tool_id))
    out = tool(state, replace("SALE", "OPEN"), tool.spec.params_for_attempt(0))
    read = texts(reader, out.image)
    assert read == ["BIG OPEN TODAY", "Call 555-123-4567"]
    assert unchanged_outside(state.image, out)
    ys, xs = np.nonzero(out.edited_region)
    sale = next(r for r in state.artifacts["text_regions"] if "SALE" in r.text).box
    assert sale.y - 4 <= ys.min() and ys.max() <= sale.y2 + 4  # only the top line was touched
    assert sale.x + 40 < xs.min() and xs.max() < sale.x2 - 80  # …and only the word SALE in it


@pytest.mark.parametrize(
    ("bg_kind", "bg", "ink", "size"),
    [("flat", (24, 40, 110), (250, 250, 250), 24), ("gradient", (200, 230, 200), (10, 110, 30), 44)],
)
def test_replacement_keeps_colour_and_size(
    bg_kind: str,
    bg: tuple[int, int, int],
    ink: tuple[int, int, int],
    size: int,
    reader: RapidOcrReader,
    detected: Callable[[np.ndarray], EditState],
) -> None:
    image = draw(background(bg_kind, 460, 200, bg), [Line("FRESH SALE", (30, 60), size, ink)])
    state = detected(image)
    tool = PillowTextReplacer(tool_spec("text_replace_pillow"))
    out = tool(state, replace("sale", "DEAL"), {"margin": 2})
    assert texts(reader, out.image) == ["FRESH DEAL"]
    region = out.edited_region
    changed = out.image[region].astype(float)
    far = np.linalg.norm(changed - np.median(changed, axis=0), axis=1) > 60
    new_ink = np.median(changed[far], axis=0)
    assert np.abs(new_ink - np.array(ink)).max() < 40
    expected = draw(background(bg_kind, 460, 200, bg), [Line("FRESH DEAL", (30, 60), size, ink)])
    rows_new = np.nonzero((np.abs(out.image.astype(int) - image.astype(int)).sum(-1) > 0).any(1))[0]
    rows_ref = np.nonzero((np.abs(expected.astype(int) - image.astype(int)).sum(-1) > 0).any(1))[0]
    assert abs(int(rows_new.min()) - int(rows_ref.min())) <= 4 and abs(int(rows_new.max()) - int(rows_ref.max())) <= 4


def test_whole_line_and_longer_replacements(
    reader: RapidOcrReader, detected: Callable[[np.ndarray], EditState]
) -> None:
    state = detected(sign("flat"))
    tool = PillowTextReplacer(tool_spec("text_replace_pillow"))
    whole = tool(state, replace("big sale today", "CLOSED"), {"margin": 2})
    assert texts(reader, whole.image) == ["CLOSED", "Call 555-123-4567"]
    longer = tool(state, replace("SALE", "CLEARANCE"), {"margin": 2})
    read = normalise_text(" ".join(texts(reader, longer.image)))
    assert "bigclearancetoday" in read and "sale" not in read


def test_replacement_errors_name_the_problem(detected: Callable[[np.ndarray], EditState]) -> None:
    state = detected(sign("flat"))
    tool = PillowTextReplacer(tool_spec("text_replace_pillow"))
    with pytest.raises(ToolError, match=r"'CLOSED'.*'BIG SALE TODAY'"):
        tool(state, replace("CLOSED", "OPEN"), {"margin": 2})
    with pytest.raises(InputError, match="new text"):
        tool(state, replace("SALE", None), {"margin": 2})
    with pytest.raises(ToolError, match="text detection"):
        tool(EditState(state.image), replace("SALE", "OPEN"), {"margin": 2})
    with pytest.raises(InputError, match="margin"):
        tool(state, replace("SALE", "OPEN"), {"margin": -1})


def test_replacement_is_deterministic(detected: Callable[[np.ndarray], EditState]) -> None:
    state = detected(sign("noise"))
    tool = InpaintTextReplacer(tool_spec("text_replace_inpaint"))
    params = tool.spec.params_for_attempt(1)
    a = tool(state, replace("SALE", "OPEN"), params)
    b = tool(state, replace("SALE", "OPEN"), params)
    assert np.array_equal(a.image, b.image) and np.array_equal(a.edited_region, b.edited_region)


# -------------------------------------------------------------------------------------------------------- removal


@pytest.mark.parametrize("kind", KINDS)
def test_telea_removes_one_word_and_keeps_the_rest(
    kind: str, reader: RapidOcrReader, detected: Callable[[np.ndarray], EditState]
) -> None:
    state = detected(sign(kind))
    tool = TeleaTextRemover(tool_spec("text_remove_telea"))
    out = tool(state, Subtask(id="x", kind="text_removal", target="SALE"), tool.spec.params_for_attempt(0))
    assert texts(reader, out.image) == ["BIG", "TODAY", "Call 555-123-4567"]
    assert unchanged_outside(state.image, out)


def test_telea_removes_all_text(reader: RapidOcrReader, detected: Callable[[np.ndarray], EditState]) -> None:
    state = detected(sign("gradient"))
    tool = TeleaTextRemover(tool_spec("text_remove_telea"))
    out = tool(state, Subtask(id="x", kind="text_removal"), tool.spec.params_for_attempt(1))
    assert texts(reader, out.image) == []
    assert out.edited_region.mean() < 0.2  # only the letters were filled, not the whole image


@pytest.mark.slow
def test_patchmatch_removes_text_keeping_texture_and_is_deterministic(
    reader: RapidOcrReader, detected: Callable[[np.ndarray], EditState]
) -> None:
    state = detected(sign("noise"))
    tool = PatchMatchTextRemover(tool_spec("text_remove_patchmatch"))
    subtask = Subtask(id="x", kind="text_removal", target="all text")
    out = tool(state, subtask, tool.spec.params_for_attempt(0))
    assert texts(reader, out.image) == []
    assert unchanged_outside(state.image, out)
    assert np.array_equal(out.image, tool(state, subtask, tool.spec.params_for_attempt(0)).image)
    # PatchMatch copies grain into the hole; Telea smooths it away.
    telea = TeleaTextRemover(tool_spec("text_remove_telea"))(state, subtask, {"radius": 3, "dilate": 3})
    hole = out.edited_region & np.roll(out.edited_region, 1, axis=1)

    def grain(image: np.ndarray) -> float:  # mean step between horizontal neighbours inside the hole (0–255)
        return float(np.abs(image.astype(float) - np.roll(image, 1, axis=1))[hole].mean())

    assert grain(out.image) > 4.0 and grain(out.image) > 3 * grain(telea.image)


def test_patchmatch_validates_patch_size(detected: Callable[[np.ndarray], EditState]) -> None:
    tool = PatchMatchTextRemover(tool_spec("text_remove_patchmatch"))
    with pytest.raises(InputError, match="odd"):
        tool(detected(sign("flat")), Subtask(id="x", kind="text_removal"), {"dilate": 3, "patch_size": 6})


# ---------------------------------------------------------------------------------------------- redact, highlight


def test_redactor_covers_the_phone_number_only(
    reader: RapidOcrReader, detected: Callable[[np.ndarray], EditState]
) -> None:
    state = detected(sign("noise"))
    tool = TextRedactor(tool_spec("text_redact_box"))
    out = tool(state, Subtask(id="x", kind="text_redaction", target="phone number"), tool.spec.params_for_attempt(0))
    assert texts(reader, out.image) == ["BIG SALE TODAY", "Call"]
    ys, xs = np.nonzero(out.edited_region)
    covered = out.image[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    assert (covered == 0).all()  # opaque black rectangle
    assert unchanged_outside(state.image, out)


def test_redactor_colour_and_padding(detected: Callable[[np.ndarray], EditState]) -> None:
    state = detected(sign("flat"))
    tool = TextRedactor(tool_spec("text_redact_box"))
    subtask = Subtask(id="x", kind="text_redaction", target="'sale'")
    thin = tool(state, subtask, {"pad": 2})
    wide = tool(state, subtask.model_copy(update={"params": {"color": "red"}}), {"pad": 6})  # the user's colour
    assert wide.edited_region.sum() > thin.edited_region.sum()
    assert (wide.image[wide.edited_region] == (255, 0, 0)).all()
    with pytest.raises(ToolError, match="email"):
        tool(state, Subtask(id="x", kind="text_redaction", target="email"), {"pad": 2})
    with pytest.raises(InputError, match="colour"):
        tool(state, subtask.model_copy(update={"params": {"color": "not-a-colour"}}), {"pad": 2})


def test_highlighter_tints_the_keyword_and_keeps_it_legible(
    reader: RapidOcrReader, detected: Callable[[np.ndarray], EditState]
) -> None:
    state = detected(sign("gradient"))
    tool = KeywordHighlighter(tool_spec("keyword_highlight"))
    out = tool(state, Subtask(id="x", kind="keyword_highlighting", target="SALE"), tool.spec.params_for_attempt(0))
    assert normalise_text(" ".join(texts(reader, out.image))) == "bigsaletodaycall5551234567"
    mark = out.edited_region
    before, after = state.image[mark].astype(float), out.image[mark].astype(float)
    yellowness = (after[:, 0] + after[:, 1]) / 2 - after[:, 2] - ((before[:, 0] + before[:, 1]) / 2 - before[:, 2])
    assert yellowness.mean() > 40
    assert unchanged_outside(state.image, out)
    with pytest.raises(InputError, match="alpha"):
        tool(state, Subtask(id="x", kind="keyword_highlighting", target="SALE"), {"alpha": 1.0})


# ------------------------------------------------------------------------------------------------------- addition


def test_writer_writes_at_a_given_position_in_a_given_colour(reader: RapidOcrReader) -> None:
    state = EditState(background("flat", 400, 240))
    tool = PillowTextWriter(tool_spec("text_add_pillow"))
    # the user's options come in the subtask; the tool params are the table's
    subtask = Subtask(
        id="x", kind="text_addition", result="Hello World", params={"position": [40, 150], "color": "green"}
    )
    out = tool(state, subtask, {"size": 28})
    assert texts(reader, out.image) == ["Hello World"]
    ys, xs = np.nonzero(np.any(out.image != state.image, axis=-1))
    assert abs(int(xs.min()) - 40) <= 3 and abs(int(ys.min()) - 150) <= 3
    greenest = out.image[ys, xs][np.argmax(out.image[ys, xs][:, 1].astype(int) - out.image[ys, xs][:, 0])]
    assert tuple(greenest) == (0, 128, 0)
    assert unchanged_outside(state.image, out)


def test_writer_picks_the_flattest_free_area_and_a_contrasting_colour(reader: RapidOcrReader) -> None:
    image = background("noise", 480, 240, (40, 40, 50))
    image[:, :240] = np.random.default_rng(1).integers(0, 255, (240, 240, 3), dtype=np.uint8)  # busy left half
    image[:, 240:] = (30, 30, 40)  # flat dark right half
    taken = TextRegion(Box(250, 100, 220, 40), "logo", 0.9)
    state = EditState(image, {"text_regions": (taken,)})
    tool = PillowTextWriter(tool_spec("text_add_pillow"))
    out = tool(state, Subtask(id="x", kind="text_addition", result="NIGHT SKY"), tool.spec.params_for_attempt(0))
    ys, xs = np.nonzero(np.any(out.image != image, axis=-1))
    assert xs.min() >= 240  # in the flat half
    assert ys.max() < taken.box.y or ys.min() > taken.box.y2  # not over the detected text
    assert out.image[ys, xs].max() == 255  # white on dark
    assert texts(reader, out.image) == ["NIGHT SKY"]


def test_writer_named_positions_and_errors() -> None:
    state = EditState(background("flat", 300, 200))
    tool = PillowTextWriter(tool_spec("text_add_pillow"))
    out = tool(state, Subtask(id="x", kind="text_addition", result="Bottom line", params={"position": "bottom"}), {})
    ys, _ = np.nonzero(out.edited_region)
    assert ys.min() > 150
    long = tool(state, Subtask(id="x", kind="text_addition", result="A very long caption " * 4), {"size": 0})
    assert np.nonzero(long.edited_region)[1].max() < 300
    with pytest.raises(InputError, match="text to write"):
        tool(state, Subtask(id="x", kind="text_addition"), {"size": 0})
    with pytest.raises(InputError, match="position"):
        tool(state, Subtask(id="x", kind="text_addition", result="x", params={"position": "somewhere"}), {})
    with pytest.raises(InputError, match="outside"):
        tool(state, Subtask(id="x", kind="text_addition", result="x", params={"position": (500, 10)}), {})


# -------------------------------------------------------------------------------------------------- pixel helpers


def test_word_box_snaps_to_the_gaps_between_words() -> None:
    image = draw(background("flat"), [Line("BIG SALE TODAY", (24, 40), 32)])
    f = font(32)
    left, _, right, _ = f.getbbox("BIG SALE TODAY")
    line = TextRegion(Box(24 + left, 36, right - left, 40), "BIG SALE TODAY", 0.99)
    (match,) = find_matches((line,), "SALE")
    box = match_box(image, match)
    big_end = 24 + f.getbbox("BIG")[2]
    sale_start, sale_end = 24 + f.getlength("BIG "), 24 + f.getbbox("BIG SALE")[2]
    today_start = 24 + f.getlength("BIG SALE ")
    assert big_end < box.x <= sale_start and sale_end <= box.x2 < today_start


def test_background_fit_recovers_a_gradient_and_the_glyph_mask() -> None:
    bg = background("gradient")
    image = draw(bg, [Line("SALE", (100, 80), 40, (150, 30, 30))])
    box = Box(95, 78, 120, 52)
    fit = estimate_background(image, box)
    true_bg = bg[box.y : box.y2, box.x : box.x2].astype(float)
    assert np.abs(fit.render() - true_bg).max() < 3.0
    mask = glyph_mask(image, box, fit)
    ink = np.any(image != bg, axis=-1)[box.y : box.y2, box.x : box.x2]
    strong = np.linalg.norm(image.astype(float) - bg, axis=-1)[box.y : box.y2, box.x : box.x2] > 60
    assert mask[strong].mean() > 0.99 and not mask[~ink].any()


# ------------------------------------------------------------------------------------------------------- contract

CONTRACT_TASKS: dict[str, Subtask] = {
    "rapidocr_detect": Subtask(id="c", kind="text_detection"),
    "rapidocr_read": Subtask(id="c", kind="text_extraction"),
    "text_replace_pillow": replace("SALE", "OPEN"),
    "text_replace_inpaint": replace("SALE", "OPEN"),
    "text_add_pillow": Subtask(id="c", kind="text_addition", result="Hello"),
    "text_redact_box": Subtask(id="c", kind="text_redaction", target="phone number"),
    "keyword_highlight": Subtask(id="c", kind="keyword_highlighting", target="SALE"),
    "text_remove_telea": Subtask(id="c", kind="text_removal", target="SALE"),
    "text_remove_patchmatch": Subtask(id="c", kind="text_removal", target="SALE"),
}


def make_text_tool(tool_id: str, reader: RapidOcrReader | None, spec: ToolSpec | None = None) -> Tool:
    from costa.tools import tool_class

    spec = spec or tool_spec(tool_id)
    cls = tool_class(spec)
    return cls(spec, reader=reader) if spec.family == "ocr" else cls(spec)


class TestTextToolContract:
    """What every text tool promises: declared output types, determinism, in-bounds masks, clear failures."""

    @pytest.mark.parametrize("tool_id", sorted(CONTRACT_TASKS))
    def test_outputs_match_declared_types_and_are_deterministic(
        self, tool_id: str, reader: RapidOcrReader, detected: Callable[[np.ndarray], EditState]
    ) -> None:
        tool = make_text_tool(tool_id, reader)
        state = detected(sign("noise")) if "text_regions" in tool.spec.inputs else EditState(sign("noise"))
        original = state.image.copy()
        params = tool.spec.params_for_attempt(0)
        first = tool(state, CONTRACT_TASKS[tool_id], params)
        second = tool(state, CONTRACT_TASKS[tool_id], params)
        produced = (set(first.artifacts) - TURN_ARTIFACTS) | ({"image"} if first.image is not None else set())
        assert produced == set(tool.spec.outputs)
        assert np.array_equal(state.image, original)  # the input is never modified
        if first.image is not None:
            assert first.image.dtype == np.uint8 and first.image.shape == original.shape
            assert first.edited_region is not None and first.edited_region.shape == original.shape[:2]
            assert first.edited_region.any() and unchanged_outside(original, first)
            assert np.array_equal(first.image, second.image)
        else:
            assert first.artifacts == second.artifacts
        regions = first.artifacts.get("text_regions", ())
        assert all(isinstance(r, TextRegion) and r.box.x2 <= original.shape[1] for r in regions)

    @pytest.mark.parametrize("tool_id", sorted(CONTRACT_TASKS))
    def test_missing_backend_raises_a_clear_error(self, tool_id: str) -> None:
        from dataclasses import replace as replace_field

        spec = replace_field(tool_spec(tool_id), requirements=Requirements(python=("no_such_backend_pkg",)))
        tool = make_text_tool(tool_id, None, spec)
        with pytest.raises(ToolUnavailableError, match="no_such_backend_pkg"):
            tool(EditState(sign("flat")), CONTRACT_TASKS[tool_id], spec.params_for_attempt(0))
