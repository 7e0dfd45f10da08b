"""The agent end to end on real embedded tools: events, checks, routing around failures, nothing lost on errors."""

from __future__ import annotations

import numpy as np
import pytest

from costa.agent import run_turn
from costa.errors import InputError
from costa.events import (
    ErrorEvent,
    NodePopped,
    NodeQueued,
    PathChosen,
    PlanReady,
    SubgraphBuilt,
    SubtaskDone,
    ToolFinished,
    ToolStarted,
    TurnDone,
)
from costa.services import Services
from costa.turn.records import TurnConfig, UserRegion
from costa.types import Box, Plan, Subtask
from tests.text_helpers import Line, background, draw


@pytest.fixture(scope="module")
def services() -> Services:
    return Services()


def sale_sign() -> np.ndarray:
    return draw(background("flat", 480, 220), [Line("SALE", (60, 40), 64, (190, 20, 20)), Line("FREE", (60, 140), 40)])


def run(services, image, plan, region=None, **config) -> list:
    return list(run_turn(services, image, plan, TurnConfig(**config), region))


@pytest.mark.slow
def test_text_turn_streams_typed_events_in_order(services: Services) -> None:
    img = sale_sign()
    plan = Plan(
        subtasks=(
            Subtask(id="s1", kind="text_replacement", target="SALE", result="OPEN"),
            Subtask(id="s2", kind="text_removal", target="FREE", parents=("s1",)),
        )
    )
    events = run(services, img.copy(), plan, alpha=1.0)
    kinds = [type(e) for e in events]
    assert kinds[0] is PlanReady and kinds[1] is SubgraphBuilt and kinds[-1] is TurnDone
    assert NodeQueued in kinds and NodePopped in kinds and ToolStarted in kinds and PathChosen in kinds
    started = [e for e in events if isinstance(e, ToolStarted)]
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert len(started) == len(finished) and all(f.seconds > 0 for f in finished)
    done = [e for e in events if isinstance(e, SubtaskDone)]
    assert [d.subtask_id for d in done] == ["s1", "s2"]
    assert all(d.quality >= 0.8 for d in done)
    turn = events[-1]
    assert turn.ok and turn.image is not None and turn.image.shape == img.shape
    text = " ".join(r.text for r in services.reader.read(turn.image)).upper()
    assert "OPEN" in text and "SALE" not in text and "FREE" not in text
    # Learned observations feed later searches.
    assert services.estimates.observed()


@pytest.mark.slow
def test_missing_target_text_fails_cleanly_and_keeps_image(services: Services) -> None:
    img = sale_sign()
    keep = img.copy()
    plan = Plan(subtasks=(Subtask(id="s1", kind="text_replacement", target="XYZZY", result="OPEN"),))
    events = run(services, img, plan)
    assert any(isinstance(e, ErrorEvent) and "no tool path passed" in e.message for e in events)
    turn = events[-1]
    assert isinstance(turn, TurnDone) and not turn.ok and turn.image is None
    assert np.array_equal(img, keep)


def test_unavailable_subtask_is_skipped_with_reason(services: Services) -> None:
    img = sale_sign()
    plan = Plan(subtasks=(Subtask(id="s1", kind="image_captioning"),))
    events = run(services, img, plan)
    built = next(e for e in events if isinstance(e, SubgraphBuilt))
    assert built.unavailable and built.unavailable[0][0] == "s1" and "llm_caption" in built.unavailable[0][1]
    assert any(isinstance(e, ErrorEvent) and "no subtask can run" in e.message for e in events)
    assert events[-1].image is None and events[-1].skipped


def test_recolour_needs_a_region_on_the_embedded_backend(services: Services) -> None:
    # "car" names no colour, so no ready grounder can find it: known when the graph is built, the turn says what
    # would ground it, and nothing is guessed.
    img = np.full((120, 160, 3), 200, np.uint8)
    plan = Plan(subtasks=(Subtask(id="s1", kind="object_recoloration", target="car", result="pink"),))
    events = run(services, img, plan)
    message = " ".join(e.message for e in events if isinstance(e, ErrorEvent))
    assert "no ready tool can find 'car'" in message and "Grounding DINO" in message and "draw a box" in message
    assert events[-1].image is None and not events[-1].ok


def test_recolour_with_box_runs_segment_then_recolour(services: Services) -> None:
    img = np.full((120, 160, 3), 220, np.uint8)
    yy, xx = np.mgrid[:120, :160]
    obj = ((xx - 80) / 40) ** 2 + ((yy - 60) / 30) ** 2 <= 1
    img[obj] = (np.array([30, 160, 40]) * (0.6 + 0.4 * (xx[obj, None] - 40) / 80)).astype(np.uint8)
    plan = Plan(subtasks=(Subtask(id="s1", kind="object_recoloration", target="blob", result="blue"),))
    events = run(services, img, plan, region=UserRegion(boxes=(Box(30, 20, 100, 80),)), alpha=1.0)
    chosen = next(e for e in events if isinstance(e, PathChosen))
    assert [t for _, t in chosen.path][-1] in ("recolor_lab", "recolor_hsv")
    out = events[-1].image
    assert out[60, 80, 2] > out[60, 80, 1]  # blue now dominates green at the centre
    assert np.array_equal(out[:15], img[:15])
    # Each attempt reports the parameters it ran with: the table's defaults, overridden by the plan's own values.
    started = {e.tool: e.params for e in events if isinstance(e, ToolStarted) and e.attempt == 0}
    recolour = started[[t for _, t in chosen.path][-1]]
    assert recolour and recolour["feather"] == 1.5


def test_plan_parameters_override_defaults_in_the_reported_attempt(services: Services) -> None:
    img = np.full((120, 160, 3), 220, np.uint8)
    img[40:80, 50:110] = (30, 160, 40)
    sub = Subtask(id="s1", kind="object_recoloration", target="blob", result="blue", params={"feather": 3.0})
    events = run(services, img, Plan(subtasks=(sub,)), region=UserRegion(boxes=(Box(40, 30, 80, 60),)), alpha=2.0)
    started = [e for e in events if isinstance(e, ToolStarted) and e.tool.startswith("recolor")]
    assert started and all(e.params["feather"] == 3.0 for e in started)


def test_out_of_range_plan_parameter_is_refused_before_any_tool_runs(services: Services) -> None:
    img = np.full((60, 80, 3), 120, np.uint8)
    sub = Subtask(id="s1", kind="object_recoloration", target="blob", result="blue", params={"strength": 5})
    plan = Plan(subtasks=(Subtask(id="s0", kind="global_adjustment", result="brighter"), sub))
    turn = run_turn(services, img, plan, region=UserRegion(boxes=(Box(10, 10, 30, 30),)))
    with pytest.raises(InputError, match=r"subtask s1 \(object_recoloration\): strength=5 is outside \[0.0, 1.0\]"):
        next(turn)  # nothing ran: the plan is refused at its first step, naming the value and the range


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"alpha": 2.5}, "alpha"),
        ({"threshold": 1.5}, "threshold"),
        ({"region": UserRegion(boxes=(Box(150, 100, 50, 50),))}, "outside"),
    ],
)
def test_bad_options_raise_before_any_work(services: Services, kw, match) -> None:
    plan = Plan(subtasks=(Subtask(id="s1", kind="text_removal"),))
    with pytest.raises(Exception, match=match):
        run(services, np.zeros((120, 160, 3), np.uint8), plan, **kw)


def test_non_rgb_image_is_rejected(services: Services) -> None:
    plan = Plan(subtasks=(Subtask(id="s1", kind="text_removal"),))
    with pytest.raises(InputError, match="RGB uint8"):
        run(services, np.zeros((10, 10), np.uint8), plan)
