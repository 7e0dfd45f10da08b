"""The real-photo suite's own machinery: the held-out split is fixed, composites carry their truth, and every measure
calls a known-right result right and a known-wrong one wrong. Only scikit-image's bundled photos are needed (the
espresso cut-out comes from scikit-image's coffee; the retext judge is also checked on a real dev sign when the
benchmarks folder is here)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from bench.real import StepRun, auc
from bench.real_tables import calibration_rows
from costa.real.cases import (
    KINDS,
    Truth,
    build_case,
    composite,
    generate_cases,
    load_cases,
    pointing_for,
)
from costa.real.measures import judge_step
from costa.real.photos import available, load_photo, photo, photos
from costa.real.signs import Sign, Word, load_signs, retext_definitions, sign_for
from costa.tools.text_edit import load_font

#: The held-out photos, as written before anything was tuned. Changing this set is changing the held-out part.
HELD_OUT = {
    "ee_action_change_1", "ee_action_change_3", "ee_background_change_5", "ee_background_change_7",
    "ee_object_addition_1", "ee_object_addition_7", "ee_object_removel_6", "ee_object_removel_8",
    "ee_object_replacement_7", "ee_style_change_4", "ee_style_change_6", "ee_texture_change_1",
    "ee_texture_change_3", "mb_294080", "mb_357424", "mb_514055", "mb_65905", "sk_astronaut", "sk_rocket",
}  # fmt: skip


def test_the_held_out_part_is_the_one_written_down() -> None:
    assert {p.id for p in photos() if p.part == "held_out"} == HELD_OUT
    assert len(photos()) >= 40


def test_every_case_uses_photos_of_its_own_part_only() -> None:
    cases = load_cases()
    assert len(cases) >= 250
    assert {c.kind for c in cases} == set(KINDS)
    for c in cases:
        assert {photo(p).part for p in c.photos_used()} == {c.part}, c.id
    assert len({p for c in cases for p in c.photos_used()}) >= 40


def test_committed_definitions_are_the_generators() -> None:
    assert tuple(generate_cases(0)) == load_cases()


@pytest.fixture(scope="module")
def espresso_on_rocket() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    bg = load_photo("sk_rocket")
    image, mask = composite(bg, "espresso", (0.5, 0.9, 0.3))
    return bg, image, mask


def test_composite_truth_is_the_background_outside_and_the_object_inside(espresso_on_rocket: tuple) -> None:
    bg, image, mask = espresso_on_rocket
    h = mask.shape[0]
    ys, _ = np.nonzero(mask)
    assert 0.25 * h <= ys.max() - ys.min() + 1 <= 0.31 * h  # pasted at the asked height
    far = ~(cv2.dilate(mask.astype(np.uint8), np.ones((5, 5), np.uint8)) > 0)
    assert np.array_equal(image[far], bg[far])  # untouched away from the object's edge
    inside = cv2.erode(mask.astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
    assert np.abs(image[inside].astype(int) - bg[inside].astype(int)).mean() > 30


def test_pointing_lies_on_the_object(espresso_on_rocket: tuple) -> None:
    _, _, mask = espresso_on_rocket
    click, _, _ = pointing_for(mask, "click")
    assert click is not None and mask[click[1], click[0]]
    _, box, _ = pointing_for(mask, "box")
    assert box is not None
    x, y, w, h = box
    ys, xs = np.nonzero(mask)
    assert x <= xs.min() and y <= ys.min() and x + w > xs.max() and y + h > ys.max()
    _, _, brush = pointing_for(mask, "brush")
    assert brush is not None and brush[mask].all() and brush.sum() > mask.sum()


def test_removal_measure(espresso_on_rocket: tuple) -> None:
    bg, image, mask = espresso_on_rocket
    t = Truth(mask=mask, background=bg)
    assert judge_step("removal", t, image, bg.copy()).right
    assert not judge_step("removal", t, image, image.copy()).right  # the object is still there
    grey = bg.copy()
    grey[mask] = 128  # a flat grey patch where the cup was
    assert not judge_step("removal", t, image, grey).right
    smeared = bg.copy()
    smeared[:40] = 0  # right where the cup was, but the sky was blacked out
    assert not judge_step("removal", t, image, smeared).right
    flat = bg.copy()  # the right colour without its texture (a smear's limit): wrong, not counted right
    flat[mask] = cv2.GaussianBlur(bg, (0, 0), 25)[mask]
    judged = judge_step("removal", t, image, flat)
    assert not judged.right and judged.numbers["detail_ratio"] < 0.4, judged.why
    assert judge_step("removal", t, image, bg.copy()).numbers["detail_ratio"] == 1.0


def test_background_measure(espresso_on_rocket: tuple) -> None:
    _, image, mask = espresso_on_rocket
    t = Truth(mask=mask)
    cut = np.where(mask[..., None], image, 255).astype(np.uint8)
    assert judge_step("background", t, image, cut).right
    assert not judge_step("background", t, image, image.copy()).right
    half = cut.copy()
    ys, _ = np.nonzero(mask)
    half[: (ys.min() + ys.max()) // 2] = 255  # the top half of the cup painted over
    assert not judge_step("background", t, image, half).right


def test_background_blur_measure(espresso_on_rocket: tuple) -> None:
    """Right: the cup kept, the rest blurred. Wrong: nothing blurred, the cup blurred too, a sharp box kept around
    the cup, or only the left half of the background blurred."""
    _, image, mask = espresso_on_rocket
    t = Truth(mask=mask)
    soft = cv2.GaussianBlur(image, (0, 0), 6.0)
    right = np.where(mask[..., None], image, soft).astype(np.uint8)
    assert judge_step("bgblur", t, image, right).right, judge_step("bgblur", t, image, right).why
    assert not judge_step("bgblur", t, image, image.copy()).right
    assert not judge_step("bgblur", t, image, soft).right  # the subject blurred as well
    ys, xs = np.nonzero(mask)
    h, w = mask.shape
    boxed = right.copy()
    y0, y1 = max(0, ys.min() - h // 6), min(h, ys.max() + h // 6)
    x0, x1 = max(0, xs.min() - w // 6), min(w, xs.max() + w // 6)
    boxed[y0:y1, x0:x1] = image[y0:y1, x0:x1]  # a box around the cup kept sharp
    assert not judge_step("bgblur", t, image, boxed).right, judge_step("bgblur", t, image, boxed).why
    half = right.copy()
    half[:, w // 2 :] = np.where(mask[:, w // 2 :, None], image[:, w // 2 :], image[:, w // 2 :])
    assert not judge_step("bgblur", t, image, half).right
    assert not judge_step("bgblur", t, image, right[:, :-8]).right  # not the input's size


def test_recolour_measure(espresso_on_rocket: tuple) -> None:
    from skimage.color import lab2rgb, rgb2lab

    _, image, mask = espresso_on_rocket
    t = Truth(mask=mask, rgb=(0, 70, 230))
    lab = rgb2lab(image)
    target = rgb2lab(np.array([[[0, 70, 230]]], np.uint8))[0, 0]
    lab[mask, 1], lab[mask, 2] = target[1], target[2]  # the asked hue, the cup's own shading kept
    blue = (np.clip(lab2rgb(lab), 0, 1) * 255).round().astype(np.uint8)
    assert judge_step("recolour", t, image, blue).right
    assert not judge_step("recolour", t, image, image.copy()).right
    everywhere = np.clip(lab2rgb(np.where(mask[..., None], lab, lab * [1, 0, 0] + target * [0, 1, 1])), 0, 1) * 255
    assert not judge_step("recolour", t, image, everywhere.round().astype(np.uint8)).right


def test_outpaint_measure() -> None:
    canvas = load_photo("sk_chelsea")
    w = canvas.shape[1]
    crop = canvas[:, : w - 100].copy()
    t = Truth(canvas=canvas, offset=(0, 0))
    assert judge_step("outpaint", t, crop, canvas.copy()).right
    flat = canvas.copy()
    flat[:, w - 100 :] = 128
    assert not judge_step("outpaint", t, crop, flat).right
    assert not judge_step("outpaint", t, crop, crop.copy()).right  # not extended at all
    moved = canvas.copy()
    moved[:, : w - 100] = np.roll(crop, 9, axis=1)
    assert not judge_step("outpaint", t, crop, moved).right  # the input shifted


def test_deblur_and_adjust_measures() -> None:
    sharp = load_photo("sk_coffee")
    blurred = cv2.GaussianBlur(sharp, (0, 0), 2.0)
    t = Truth(sharp=sharp)
    assert judge_step("deblur", t, blurred, sharp.copy()).right
    assert not judge_step("deblur", t, blurred, blurred.copy()).right
    brighter = np.clip(sharp.astype(int) + 25, 0, 255).astype(np.uint8)
    darker = np.clip(sharp.astype(int) - 25, 0, 255).astype(np.uint8)
    assert judge_step("adjust", Truth(adjust="brighter"), sharp, brighter).right
    assert not judge_step("adjust", Truth(adjust="brighter"), sharp, darker).right
    assert not judge_step("adjust", Truth(adjust="brighter"), sharp, np.full_like(sharp, 230)).right
    grey = np.repeat(cv2.cvtColor(sharp, cv2.COLOR_RGB2GRAY)[..., None], 3, axis=2)
    assert judge_step("adjust", Truth(adjust="grayscale"), sharp, grey).right
    assert not judge_step("adjust", Truth(adjust="grayscale"), sharp, sharp.copy()).right


def test_text_measure_and_missing_image() -> None:
    t = Truth(words=("PRIMITIVE", "ROAD", "NO", "WARNING", "SIGNS"))
    img = np.zeros((8, 8, 3), np.uint8)
    assert judge_step("text", t, img, None, "PRIMITIVE ROAD; NO WARNING SIGNS").right
    assert not judge_step("text", t, img, None, "PRIMITIVE RAD").right
    assert not judge_step("removal", Truth(mask=np.ones((8, 8), bool), background=img), img, None).right


def test_auc_and_calibration_rows() -> None:
    assert auc([9, 8, 2, 1], [True, True, False, False]) == 1.0
    assert auc([1, 2, 3], [True, True, True]) is None
    steps = [
        StepRun("c1", "dev", "removal", "object_removal", "remove_patchmatch", "verified", True, "", "photo", "small",
                "box"),
        StepRun("c2", "dev", "removal", "object_removal", "remove_patchmatch", "verified", False, "", "photo", "small",
                "box"),
        StepRun("c3", "dev", "removal", "object_removal", "remove_patchmatch", "not done", False, "", "photo", "small",
                "box"),
    ]  # fmt: skip
    rows = calibration_rows(steps)
    assert len(rows) == 1 and (rows[0].cases, rows[0].right, rows[0].source) == (2, 1, "bench")


def test_a_write_with_kinds_rewrites_only_their_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`bench real --write --kinds deblur`: the deblurring rows come from this run, every other row stays as the
    table had it, and the note says what was rewritten from what."""
    import argparse

    from bench.real_tables import write_tables
    from costa import calibration
    from costa.calibration import load_calibration

    shipped = load_calibration()
    out = tmp_path / "calibration.csv"
    out.write_text(calibration.CALIBRATION_FILE.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(calibration, "CALIBRATION_FILE", out)  # the shipped table, in a copy
    from costa.reflect import votes

    shipped_votes = votes.load_votes()
    votes_out = tmp_path / "reflection_votes.csv"
    votes_out.write_text(votes.VOTES_FILE.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(votes, "VOTES_FILE", votes_out)  # and the shipped votes, in a copy
    steps = [
        StepRun(f"c{i}", "dev", "deblur", "image_deblurring", "unsharp_deblur", "proposed", i != 0, "", "photo",
                "none", "none")
        for i in range(30)
    ]  # fmt: skip
    write_tables(steps, 30, argparse.Namespace(kinds="deblur", out="", verdicts=None))
    got = load_calibration(out)
    assert {c: r for c, r in got.rows.items() if c.kind != "image_deblurring"} == {
        c: r for c, r in shipped.rows.items() if c.kind != "image_deblurring"
    }
    deblur = [r for c, r in got.rows.items() if c.kind == "image_deblurring"]
    assert [(r.context.tool, r.cases, r.right) for r in deblur] == [("unsharp_deblur", 30, 29)]
    assert "Then image_deblurring rewritten from 30 dev cases (30 subtasks)" in out.read_text(encoding="utf-8")
    kept = {k: r for k, r in votes.load_votes(votes_out).rows.items() if k[2] != "image_deblurring"}
    assert kept == {k: r for k, r in shipped_votes.rows.items() if k[2] != "image_deblurring"}


def _bench(*args: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COSTA_BENCHMARKS_DIR": os.environ.get("COSTA_BENCHMARKS_DIR", "/nonexistent"),
           **(env_extra or {})}  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "costa", "bench", "real", *args], capture_output=True, text=True, env=env, timeout=600
    )


def test_bench_real_cli_runs_a_small_part_and_reports_the_rates() -> None:
    """Through the real interface: one adjustment case (a scikit-image photo when the benchmarks are absent)."""
    r = _bench("--dev", "--kinds", "adjust", "--n", "1", "--seed", "3")
    assert r.returncode == 0, r.stderr
    assert "verified done:" in r.stdout and "exit codes:" in r.stdout and "adjust" in r.stdout


def test_bench_real_cli_refuses_bad_options() -> None:
    r = _bench("--kinds", "teleport")
    assert r.returncode == 2 and "unknown kind 'teleport'" in r.stderr
    r = _bench("--held-out", "--write")
    assert r.returncode == 2 and "dev part only" in r.stderr


# ------------------------------------------------------------------------------------- retext (text on signs)

_FONTS = Path("/usr/share/fonts/truetype/dejavu")


def _ring_colour(image: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    x, y, w, h = box
    m = np.zeros(image.shape[:2], bool)
    m[max(0, y - 3) : y + h + 3, max(0, x - 3) : x + w + 3] = True
    m[y : y + h, x : x + w] = False
    return np.median(image[m].reshape(-1, 3), axis=0).astype(np.uint8)


def _ink_colour(image: np.ndarray, box: tuple[int, int, int, int], panel: np.ndarray) -> tuple[int, int, int]:
    x, y, w, h = box
    crop = image[y : y + h, x : x + w].reshape(-1, 3).astype(float)
    far = np.sqrt(((crop - panel.astype(float)) ** 2).sum(axis=1))
    ink = crop[far >= np.percentile(far, 85)]
    return tuple(int(v) for v in np.median(ink, axis=0))  # type: ignore[return-value]


def draw_result(
    before: np.ndarray, sign: Sign, old: str, new: str, how: str = "right"
) -> np.ndarray:  # fmt: skip
    """A result of replacing `old` by `new` on `sign`, right or wrong as `how` says: "right" (old box painted with
    the panel's colour, the new word in bold at the old height, centred), "overflow" (3× as tall, spilling off the
    sign), "next_line" (moved down over the line below), "large" (1.8× as tall), "small" (0.35×), "thin" (the old
    height in DejaVu ExtraLight), "old_left" (written over the old word without erasing it), "nothing"."""
    from PIL import Image, ImageDraw, ImageFont

    out = before.copy()
    if how == "nothing":
        return out
    box = sign.word(old).box
    x, y, w, h = box
    panel = _ring_colour(before, box)
    colour = _ink_colour(before, box, panel)
    if how != "old_left":  # the box and a pixel around it: a glyph's soft edge may lie just outside the hand box
        out[max(0, y - 1) : y + h + 1, max(0, x - 1) : x + w + 1] = panel
    scale = {"overflow": 3.0, "large": 1.8, "small": 0.35}.get(how, 1.0)
    target = max(4, round(h * scale))
    path = _FONTS / ("DejaVuSans-ExtraLight.ttf" if how == "thin" else "DejaVuSans-Bold.ttf")
    if how == "thin" and not path.exists():
        pytest.skip("DejaVu ExtraLight is not installed")
    size = target
    for _ in range(40):  # the font size whose ink is `target` px tall and fits the box's width (when right)
        font = ImageFont.truetype(str(path), size) if path.exists() else load_font(size, bold=True)
        left, t, r, b = font.getbbox(new)
        if b - t <= target and (how in ("overflow", "large") or r - left <= w):
            break
        size -= 1
    cx, cy = x + w / 2, y + h / 2 + (1.3 * h if how == "next_line" else 0)
    pil = Image.fromarray(out)
    ImageDraw.Draw(pil).text((cx - (left + r) / 2, cy - (t + b) / 2), new, font=font, fill=colour)
    return np.asarray(pil).copy()


def _drawn_sign() -> tuple[np.ndarray, Sign]:
    """A grey sign with two lines of dark bold capitals on a real photo (scikit-image's coffee), its word boxes
    measured from the drawn ink."""
    from PIL import Image, ImageDraw

    image = load_photo("sk_coffee").copy()
    image[60:230, 150:450] = (200, 204, 198)
    pil = Image.fromarray(image)
    draw = ImageDraw.Draw(pil)
    font = load_font(40, bold=True)
    words = []
    for text, (x, y) in (("OPEN", (190, 80)), ("DAILY", (230, 122))):
        draw.text((x, y), text, font=font, fill=(30, 30, 40))
        left, t, r, b = draw.textbbox((x, y), text, font=font)
        words.append(Word(text, (int(left), int(t), int(r - left), int(b - t))))
    panel = ((150, 60), (449, 60), (449, 229), (150, 229))
    return np.asarray(pil).copy(), Sign("sk_coffee", panel, tuple(words), (("OPEN", "SHUT", "GO"),))


def _cases() -> list[tuple[str, np.ndarray, Sign, str, str]]:
    image, sign = _drawn_sign()
    out = [("drawn", image, sign, "OPEN", "SHUT")]
    real = sign_for("ee_object_replacement_6")  # a dev photo: the held-out signs are never used to set the judge
    if available(photo(real.photo)):
        out.append(("road sign", load_photo(real.photo), real, "ROAD", "PATH"))
    return out


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c[0])
def test_retext_judge_calls_right_right_and_every_mistake_wrong(case: tuple) -> None:
    _, before, sign, old, new = case
    truth = Truth(words=tuple(w.text for w in sign.words), sign=sign, old=old, new=new)
    right = judge_step("retext", truth, before, draw_result(before, sign, old, new))
    assert right.right, right.why
    expected = {
        "nothing": "nothing changed",
        "overflow": "outside the sign",
        "next_line": "covers the word",
        "large": "",
        "small": "height",
        "thin": "strokes",
        "old_left": "old word is left",
    }
    for how, why in expected.items():
        verdict = judge_step("retext", truth, before, draw_result(before, sign, old, new, how))
        assert not verdict.right, (how, verdict.why)
        assert why in verdict.why, (how, verdict.why)
    wrong_word = judge_step("retext", truth, before, draw_result(before, sign, old, "XQZ"))
    assert not wrong_word.right and "does not read" in wrong_word.why


def test_signs_file_is_whole_and_cases_follow_the_photos_parts() -> None:
    signs = load_signs()
    assert {s.photo for s in signs} >= {"ee_object_replacement_6", "mb_514055"}
    for s in signs:
        for w in s.words:
            x, y, bw, bh = w.box
            assert x >= 0 and y >= 0 and bw > 0 and bh > 0, (s.photo, w)
    defs = retext_definitions("dev") + retext_definitions("held_out")
    committed = [c for c in load_cases() if c.kind == "retext"]
    assert [d["id"] for d in defs] == [c.id for c in committed]
    for c in committed:
        assert photo(c.photo).part == c.part
        assert {c.params["length"] for c in committed} == {"similar", "other"}
    assert {c.pointing for c in committed} == {"none", "box"}


def test_a_retext_case_builds_its_truth_and_the_users_box() -> None:
    case = next(c for c in load_cases() if c.kind == "retext" and c.pointing == "box")
    if not available(photo(case.photo)):
        pytest.skip("the benchmarks folder is absent")
    built = build_case(case)
    assert built.truth.sign is not None
    word = built.truth.sign.word(built.truth.old)
    assert built.box is not None and built.steps == ("retext",)
    bx, by, bw, bh = built.box
    x, y, w, h = word.box
    assert bx <= x and by <= y and bx + bw >= x + w and by + bh >= y + h
