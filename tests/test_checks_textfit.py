"""Replaced text fits where the old text was (costa.checks.textfit; issue 18 part 7), on a real sign photo.

MagicBrush's alpine warning sign: a red bold "STOP!" tilted over two black lines. "GO!" replacing it was drawn at a
142-px regular face (the OCR box of "STOP!" held the top of the line below, which was measured as part of the word),
overflowed onto "Hinter den Abschrankungen bleiben." and passed at 1.00.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from costa.checks.textfit import text_fit
from costa.glyphs import locate_text
from costa.types import EditState, Subtask
from tests.conftest import SHARED_BENCHMARKS
from tests.text_helpers import shared_reader, tool_spec

SIGN = Path(os.environ.get("COSTA_BENCHMARKS_DIR") or SHARED_BENCHMARKS) / "magicbrush_sample/images/orig/514055_1.png"


@pytest.fixture(scope="module")
def stop_sign() -> tuple[np.ndarray, tuple]:
    if not SIGN.exists():
        pytest.skip(f"needs {SIGN} (../shared/benchmarks)")
    from PIL import Image

    image = np.asarray(Image.open(SIGN).convert("RGB"))
    regions = shared_reader().read(image)
    return image, regions


def _draw_like_before(image: np.ndarray, box, size: int) -> np.ndarray:
    """What the replacer drew before the fix: the old red letters painted out, "GO!" in DejaVu Sans regular at
    `size` px, centred on the old (too tall) ink."""
    from PIL import Image, ImageDraw

    from costa.signstyle import measure_sign
    from costa.tools.text_edit import load_font

    sign = measure_sign(image, box)
    out = image.copy()
    crop = out[box.y : box.y2, box.x : box.x2]
    crop[sign.letters] = sign.background.mean_colour
    pil = Image.fromarray(out)
    font = load_font(size, False)
    left, top, right, _ = font.getbbox("GO!", anchor="ls")
    ox = box.x + box.w / 2 - (left + right) / 2
    ImageDraw.Draw(pil).text((ox, 331 - top), "GO!", font=font, fill=sign.fill, anchor="ls")
    return np.asarray(pil).copy()


def test_go_drawn_far_larger_in_a_thinner_face_over_the_next_line_fails(stop_sign) -> None:
    image, regions = stop_sign
    ((match, box),) = locate_text(image, regions, "STOP!")
    others = [r.box for r in regions if "STOP" not in r.text]
    wrong = text_fit(image, _draw_like_before(image, box, 142), box, match.text, "GO!", others)
    assert wrong.quality == 0.0
    text = " ".join(wrong.reasons)
    assert "not the old text's size" in text and "not the old text's weight" in text
    assert "covers other text" in text


def test_the_replacer_keeps_the_old_letters_size_weight_and_place_on_the_real_sign(stop_sign) -> None:
    from costa.tools.text_edit import InpaintTextReplacer, PillowTextReplacer

    image, regions = stop_sign
    ((match, box),) = locate_text(image, regions, "STOP!")
    others = [r.box for r in regions if "STOP" not in r.text]
    subtask = Subtask(id="s1", kind="text_replacement", target="STOP!", result="GO!")
    for cls, tool_id in ((PillowTextReplacer, "text_replace_pillow"), (InpaintTextReplacer, "text_replace_inpaint")):
        tool = cls(tool_spec(tool_id))
        out = tool(EditState(image, {"text_regions": regions}), subtask, tool.spec.params_for_attempt(0))
        fit = text_fit(image, out.image, box, match.text, "GO!", others)
        assert fit.quality == 1.0, fit.reasons
        lines = [r.text for r in shared_reader().read(out.image)]
        assert lines[0] == "GO!" and any("Abschrankungen" in t for t in lines), lines


def test_a_longer_word_runs_on_over_the_bare_panel_but_not_off_it() -> None:
    """'OPEN' → 'CLOSED' alone on a card keeps the old letters' size and runs on over the empty panel (it used to be
    shrunk to the old box and then failed its own size check); the same word on a card cut just after 'OPEN' has no
    panel to run on, so a longer word there is judged as overflowing."""
    from costa.tools.text_edit import PillowTextReplacer
    from tests.text_helpers import Line, background, draw

    card = draw(background("flat", 460, 160), [Line("OPEN", (30, 50), 40, (20, 20, 20))])
    regions = shared_reader().read(card)
    ((match, box),) = locate_text(card, regions, "OPEN")
    tool = PillowTextReplacer(tool_spec("text_replace_pillow"))
    subtask = Subtask(id="s1", kind="text_replacement", target="OPEN", result="CLOSED")
    out = tool(EditState(card, {"text_regions": regions}), subtask, tool.spec.params_for_attempt(0))
    fit = text_fit(card, out.image, box, match.text, "CLOSED")
    assert fit.quality == 1.0, fit.reasons
    assert [r.text for r in shared_reader().read(out.image)] == ["CLOSED"]
    framed = card.copy()
    framed[:, box.x2 + 6 :] = (200, 30, 30)  # a red frame right after the word: no bare panel there
    wide = framed.copy()
    wide[out.image[..., 0] < 100] = (20, 20, 20)  # the same long word drawn over the frame
    assert text_fit(framed, wide, box, match.text, "CLOSED").quality < 0.8


def test_a_word_run_off_a_card_onto_a_background_of_its_own_colour_is_caught_and_not_drawn() -> None:
    """The conversation suite's 'OPEN' → 'CLOSED' on a small card against a night sky: the D was drawn on the sky,
    where dark letters on dark blue are no 'new ink', and the fit check said 0 % beyond the place (the OCR box, and
    with it the 'panel', reached past the card's edge). Now every changed pixel beyond the place counts, the place is
    trimmed to the card, and the replacer does not draw past the card's edge."""
    from costa.tools.text_edit import PillowTextReplacer, load_font
    from tests.text_helpers import Line, draw

    sky = np.zeros((120, 300, 3), np.uint8)
    sky[:] = (24, 32, 58)
    sky[20:70, 16:112] = (236, 232, 220)  # the card, just wide enough for OPEN
    card = draw(sky, [Line("OPEN", (26, 30), 26, (30, 30, 40))])
    regions = shared_reader().read(card)
    ((match, box),) = locate_text(card, regions, "OPEN")
    from PIL import Image, ImageDraw

    overflowing = Image.fromarray(card.copy())
    pen = ImageDraw.Draw(overflowing)
    pen.rectangle((18, 22, 110, 68), fill=(236, 232, 220))  # the old word painted out
    pen.text((26, 30), "CLOSED", font=load_font(26, True), fill=(30, 30, 40))  # runs on over the sky
    wrong = np.asarray(overflowing).copy()
    assert (np.abs(wrong[:, 112:].astype(int) - card[:, 112:]).max(axis=2) > 12).any()  # it did reach the sky
    verdict = text_fit(card, wrong, box, match.text, "CLOSED")
    assert verdict.quality < 0.8 and any("overflows" in r for r in verdict.reasons), verdict.reasons
    tool = PillowTextReplacer(tool_spec("text_replace_pillow"))
    subtask = Subtask(id="s1", kind="text_replacement", target="OPEN", result="CLOSED")
    out = tool(EditState(card, {"text_regions": regions}), subtask, tool.spec.params_for_attempt(0))
    assert out.image is not None
    beyond = np.abs(out.image[:, 113:].astype(int) - card[:, 113:]).max(axis=2) > 12
    assert not beyond.any()  # nothing drawn on the sky
