"""Whole-image benchmark cases and the synthetic multi-step task suite: reproducible, planned, verified by truth."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest

from bench.tasks import run_task
from costa.cli import main
from costa.planner import plan_with_rules
from costa.services import Services
from costa.synthetic.cases import make_cases
from costa.synthetic.cases_image import IMAGE_CASE_KINDS, image_truth, make_image_cases
from costa.synthetic.tasks import Expected, make_task, make_tasks
from costa.synthetic.truth import Frame, match_plan, verify_subtask
from costa.tables import load_tables


@pytest.mark.parametrize("kind", sorted(IMAGE_CASE_KINDS))
def test_image_cases_are_reproducible_and_carry_their_truth(kind: str) -> None:
    first, again = make_image_cases(kind, 3, seed=4), make_cases(kind, 3, seed=4)
    assert [c.subtask for c in first] == [c.subtask for c in again]
    assert all(np.array_equal(a.image, b.image) for a, b in zip(first, again, strict=True))
    for case in first:
        assert case.subtask.kind == kind and case.image.dtype == np.uint8
        if kind == "image_upscaling":
            assert case.truth is not None and case.truth.shape[0] > case.image.shape[0]
        elif kind == "image_deblurring":
            assert case.truth is not None and case.truth.shape == case.image.shape
            assert not np.array_equal(case.truth, case.image)
        elif kind == "outpainting":
            assert case.truth is not None
            x0, y0 = case.origin
            h, w = case.image.shape[:2]
            assert np.array_equal(case.truth[y0 : y0 + h, x0 : x0 + w], case.image)


def test_image_truth_measures() -> None:
    deblur = make_image_cases("image_deblurring", 1, seed=1)[0]
    assert deblur.truth is not None
    name, gain = image_truth(deblur, deblur.truth)  # type: ignore[misc]
    assert name == "PSNR gain dB" and gain > 3.0
    out = make_image_cases("outpainting", 1, seed=1)[0]
    assert out.truth is not None
    assert math.isinf(image_truth(out, out.truth)[1])  # type: ignore[index]
    assert image_truth(out, out.image) is None  # not the truth's size: nothing to compare


def test_tasks_are_reproducible_and_sized_one_to_eight() -> None:
    a, b = make_tasks(12, seed=3), make_tasks(12, seed=3)
    assert [t.instruction for t in a] == [t.instruction for t in b]
    assert all(np.array_equal(x.image, y.image) for x, y in zip(a, b, strict=True))
    assert [t.instruction for t in make_tasks(12, seed=4)] != [t.instruction for t in a]
    assert all(1 <= len(t.expected) <= 8 for t in a)
    assert {t.family for t in make_tasks(30, seed=0)} == {"sign", "contact", "object"}


def test_the_rule_planner_plans_every_clause_of_the_suite() -> None:
    kinds = load_tables().subtasks
    for task in make_tasks(30, seed=0):
        plan = plan_with_rules(task.instruction, kinds)
        matched = match_plan(plan, task.expected)
        assert len(matched) == len(task.expected), (task.instruction, [s.describe() for s in plan.subtasks])


def test_verification_fails_wrong_outcomes() -> None:
    task = make_task(1, 0)
    img = task.image
    frame = Frame()
    brighter = Expected("global_adjustment", "Make it brighter.", result="brighter")
    darker = (img * 0.8).astype(np.uint8)
    assert not verify_subtask(task, brighter, img, darker, "", frame, [], None)[0]
    assert verify_subtask(task, brighter, darker, img, "", frame, [], None)[0]
    up = Expected("image_upscaling", "Upscale the image 2x.", result="2")
    assert not verify_subtask(task, up, img, np.repeat(img, 3, axis=0), "", frame, [], None)[0]
    assert verify_subtask(task, up, img, np.repeat(np.repeat(img, 2, axis=0), 2, axis=1), "", frame, [], None)[0]
    out = Expected("outpainting", "Extend the image to the left.", params={"direction": "left"})
    h, w = img.shape[:2]
    canvas = np.zeros((h, w + round(0.25 * w), 3), np.uint8)
    canvas[:, -w:] = img
    assert verify_subtask(task, out, img, canvas, "", frame, [], None)[0]
    assert not verify_subtask(task, out, img, np.roll(canvas, 3, axis=1), "", frame, [], None)[0]
    read = Expected("text_extraction", "Read the text.")
    assert not verify_subtask(task, read, img, None, "OPEN", frame, ["OPEN", "SALE", "EXIT"], None)[0]


@pytest.mark.slow
def test_tasks_run_end_to_end_and_pass_their_truth() -> None:
    services = Services()
    for index in (1, 2):  # an object removal + cooler, a text replacement + more saturated (seed 0)
        result = run_task(services, make_task(index, 0))
        assert result.success, result.verdicts
        assert result.executions >= len(result.verdicts)


@pytest.mark.slow
def test_bench_tasks_command() -> None:
    out = io.StringIO()
    assert main(["bench", "tasks", "--n", "1", "--seed", "0"], out) == 0
    report = out.getvalue()
    assert "synthetic tasks (seed 0)" in report and "tasks fully done and verified" in report
    assert main(["bench", "tasks", "--n", "0"], io.StringIO()) == 2
