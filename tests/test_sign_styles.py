"""Sign styles: the scenes carry their ground truth, the sign measurement reads panel, fill, outline and shadow, and
the real text tools replace and remove text on every style in the sign's own colours."""

from __future__ import annotations

import numpy as np
import pytest

from costa.signstyle import measure_sign
from costa.synthetic.scenes import Lettering
from costa.synthetic.sign_styles import SIGN_STYLES, make_styled_text_scene
from costa.tools.text_edit import InpaintTextReplacer, PillowTextReplacer
from costa.tools.text_removal import TeleaTextRemover
from costa.types import EditState, Subtask
from tests.text_helpers import shared_reader, tool_spec


@pytest.mark.parametrize("style", SIGN_STYLES)
def test_styled_scenes_are_deterministic_and_keep_their_truth(style: str) -> None:
    a, b = make_styled_text_scene(5, style), make_styled_text_scene(5, style)
    assert np.array_equal(a.image, b.image) and a.style == style
    assert a.image.shape == a.background.shape and a.alpha.shape == a.image.shape[:2]
    outside = a.alpha < 0.01
    assert np.abs(a.image[outside].astype(int) - a.background[outside].astype(int)).max() <= 3  # only text differs


def _box(scene, pad: int = 4):
    from costa.types import Box

    b = scene.target.box
    h, w = scene.alpha.shape
    return Box(b.x - pad, b.y - pad, b.w + 2 * pad, b.h + 2 * pad).clip(w, h)


@pytest.mark.parametrize(("style", "outline", "shadow"), [("outlined", True, False), ("shadowed", False, True)])
def test_outline_and_shadow_are_measured(style: str, outline: bool, shadow: bool) -> None:
    for seed in (1, 2, 3):
        scene = make_styled_text_scene(seed, style, lettering=Lettering(size=64, angle=0.0))
        sign = measure_sign(scene.image, _box(scene, pad=scene.size // 5))  # an OCR box's margin
        assert np.abs(np.array(sign.fill) - np.array(scene.colour)).max() < 40, (sign.fill, scene.colour)
        assert (sign.outline is not None) is outline and (sign.shadow is not None) is shadow, (seed, sign)
        if shadow:
            assert sign.shadow_offset[0] > 0 and sign.shadow_offset[1] > 0


def test_light_text_on_a_saturated_panel_is_measured_inside_the_box() -> None:
    scene = make_styled_text_scene(4, "photo_sign", lettering=Lettering(size=56, angle=0.0))
    sign = measure_sign(scene.image, _box(scene, pad=10))  # the box reaches past the panel
    panel_truth = scene.background[scene.target.box.y + 2, scene.target.box.x + 2]
    assert np.abs(np.array(sign.panel) - panel_truth.astype(int)).max() < 30
    assert min(sign.fill) > 200 or sign.fill[2] < 100  # white or yellow letters


@pytest.fixture(scope="module")
def detect():
    from costa.tools.ocr import RapidOcrDetector

    reader = shared_reader()
    detector = RapidOcrDetector(tool_spec("rapidocr_detect"), reader=reader)

    def run(image: np.ndarray) -> EditState:
        state = EditState(image)
        return state.with_output(detector(state, Subtask(id="d", kind="text_detection"), {}))

    return run


@pytest.mark.slow
@pytest.mark.parametrize("style", ["light_on_dark", "light_on_saturated", "outlined", "shadowed", "photo_sign"])
def test_replacement_and_removal_work_on_every_sign_style(style: str, detect) -> None:
    from costa.checks import CheckContext
    from costa.checks.text import check_text_removal, check_text_replacement

    ctx = CheckContext(reader=shared_reader())
    scene = make_styled_text_scene(11, style, lettering=Lettering(size=64))
    state = detect(scene.image)
    word = scene.target.text
    replace = Subtask(id="r", kind="text_replacement", target=word, result="MENU" if word != "MENU" else "CAFE")
    passed = []
    for cls, tool_id in ((PillowTextReplacer, "text_replace_pillow"), (InpaintTextReplacer, "text_replace_inpaint")):
        tool = cls(tool_spec(tool_id))
        out = tool(state, replace, tool.spec.params_for_attempt(0))
        verdict = check_text_replacement(ctx, replace, state, state.with_output(out), out)
        passed.append(verdict.quality >= 0.8)
    assert any(passed), style
    remove = Subtask(id="x", kind="text_removal", target=word)
    tool = TeleaTextRemover(tool_spec("text_remove_telea"))
    out = tool(state, remove, tool.spec.params_for_attempt(0))
    verdict = check_text_removal(ctx, remove, state, state.with_output(out), out)
    assert verdict.quality >= 0.8, verdict


def test_bench_tools_variants_prints_a_pass_rate_per_style() -> None:
    from bench.tools import run_variants_bench

    report = run_variants_bench(cases=1, seed=0, tools=["text_redact_box"])
    header = report.splitlines()[1]
    assert all(style in header for style in SIGN_STYLES)
    row = next(line for line in report.splitlines() if line.startswith("text_redact_box on text_redaction"))
    rates = [float(v) for v in row.split()[-len(SIGN_STYLES) :]]
    assert len(rates) == len(SIGN_STYLES) and all(0.0 <= r <= 1.0 for r in rates)
