"""FaSTA* subroutines: features, rule table, persisted observations, induction trigger, inducers, verification, and
the fast–slow executor on real tools (small synthetic scenes)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from costa.agent import TurnEnv, run_turn
from costa.config import Settings
from costa.errors import TableError
from costa.events import Fallback, RuleHit, SubtaskDone, ToolFinished, ToolStarted, TurnDone
from costa.services import Services
from costa.store import Store
from costa.subroutines.features import ContextFeatures, compute_features
from costa.subroutines.mining import (
    Candidate,
    best_condition,
    episodes,
    induce,
    induce_contrastive,
    induce_llm,
    induce_statistical,
)
from costa.subroutines.observations import ObservationLog, StoredEstimates, Trace
from costa.subroutines.rules import Condition, Rule, RuleTable, diff_tables, load_shipped_rules, validate_rules
from costa.subroutines.runtime import FastSlowRuntime
from costa.subroutines.verification import SampleResult, refine, verify
from costa.tables import load_tables
from costa.testing.calibration import fake_table
from costa.turn.executor import StepExecutor
from costa.turn.records import TurnConfig
from costa.types import Box, Plan, Subtask


@pytest.fixture(scope="module")
def tables():
    return load_tables()


def feats(**kw) -> ContextFeatures:
    return ContextFeatures(kw.pop("kind", "object_removal"), 100, **kw)


# ------------------------------------------------------------------------------------------------------ features


def test_features_see_texture_size_and_same_colour_neighbours() -> None:
    rng = np.random.default_rng(0)
    flat = np.full((96, 128, 3), 200, np.uint8)
    flat[30:60, 40:80] = (200, 30, 30)
    box = (Box(36, 26, 48, 38),)
    f = compute_features(flat, Subtask(id="s1", kind="object_removal"), box)
    assert f.texture_class == "flat" and f.candidates == 1 and f.neighbour_similarity == 0.0
    assert f.region_fraction == pytest.approx(48 * 38 / (96 * 128))
    textured = flat.copy()
    textured[:] = rng.integers(0, 255, textured.shape, dtype=np.uint8)
    textured[30:60, 40:80] = (200, 30, 30)
    assert compute_features(textured, Subtask(id="s1", kind="object_removal"), box).texture_class == "textured"
    neighbour = flat.copy()
    neighbour[30:60, 86:100] = (200, 30, 30)  # same colour, just outside the box
    g = compute_features(neighbour, Subtask(id="s1", kind="object_removal"), box)
    assert g.neighbour_similarity > 0.1 and g.candidates == 2
    r = compute_features(flat, Subtask(id="s1", kind="object_recoloration", result="blue"), box)
    assert r.colour_shift > 50  # red → blue is an extreme transition
    assert ContextFeatures.from_dict(r.to_dict()) == r


# ------------------------------------------------------------------------------------------------------- rules


def test_shipped_rules_name_only_ready_tools_and_real_chains(tables) -> None:
    rules = load_shipped_rules(tables)
    services = Services(tables=tables)
    assert rules
    for r in rules:
        for tool in r.tools:
            assert services.why_not(tool) is None, f"{r.id} names {tool}, which cannot load: {services.why_not(tool)}"


def test_validate_rules_rejects_unknown_tools_and_broken_chains(tables) -> None:
    with pytest.raises(TableError, match="unknown tools"):
        validate_rules([Rule("x", "text_removal", ("rapidocr_detect", "nope"))], tables, "test")
    with pytest.raises(TableError, match="not a tool chain"):
        validate_rules([Rule("x", "text_removal", ("text_remove_telea",))], tables, "test")
    with pytest.raises(TableError, match="unknown feature"):
        Condition("colourfulness", "<", 1.0)


def test_choice_minimises_the_search_score_not_the_inverted_one() -> None:
    cheap_poor = Rule("a", "object_removal", ("x",), seconds=1.0, quality=0.5)
    slow_good = Rule("b", "object_removal", ("y",), seconds=2.0, quality=1.0)
    table = RuleTable((cheap_poor, slow_good))
    # α=0 is quality only: (2−0.5)² = 2.25 vs (2−1)² = 1 → b. The published C^α·Q^(2−α) would pick a (0.25 < 1).
    assert table.choose(feats(), 0.0).id == "b"
    # α=1: 1·1.5 = 1.5 vs 2·1 = 2 → a; α=2 cost only → a.
    assert table.choose(feats(), 1.0).id == "a"
    assert table.choose(feats(), 2.0).id == "a"
    # Equal scores at the ends of α: at α=0 two rules of quality 1.0 tie, and the cheaper one runs even when the dearer
    # is more specific (it used to win the tie); at α=2 two of 1 s tie, and the better one runs.
    general = Rule("cheap", "object_removal", ("x",), seconds=1.1, quality=1.0, version=2)
    specific = Rule("dear", "object_removal", ("y",), (Condition("region_fraction", ">", 0.01),), 2.2, 1.0, version=1)
    assert RuleTable((specific, general)).choose(feats(region_fraction=0.2), 0.0).id == "cheap"
    assert RuleTable((specific, general)).choose(feats(region_fraction=0.2), 1.0).id == "cheap"
    poor = Rule("poor", "object_removal", ("x",), (Condition("region_fraction", ">", 0.01),), 1.0, 0.85)
    good = Rule("good", "object_removal", ("y",), seconds=1.0, quality=0.95, version=3)
    assert RuleTable((poor, good)).choose(feats(region_fraction=0.2), 2.0).id == "good"
    gated = RuleTable((Rule("c", "object_removal", ("x",), (Condition("region_fraction", ">", 0.1),)),))
    assert gated.choose(feats(region_fraction=0.05), 1.0) is None
    assert gated.choose(feats(region_fraction=0.2), 1.0).id == "c"


def test_rule_versions_diff_and_reset(tmp_path: Path, tables) -> None:
    log = ObservationLog(Store(tmp_path))
    shipped = load_shipped_rules(tables)
    r1 = Rule("learned-1", "text_removal", ("rapidocr_detect", "text_remove_telea"), (Condition("texture", "<", 6),))
    assert log.append_rules([("add", r1)]) == 1
    r1b = Rule("learned-1", "text_removal", ("rapidocr_detect", "text_remove_telea"), (Condition("texture", "<", 4),))
    assert log.append_rules([("modify", r1b), ("retire", shipped[0])]) == 2
    v0, v1, v2 = (log.rule_table(shipped, v) for v in (0, 1, 2))
    assert len(v0.rules) == len(shipped) and len(v1.rules) == len(shipped) + 1 and len(v2.rules) == len(shipped)
    changes = {(what, (old or new).id) for what, old, new in diff_tables(v1, v2)}
    assert changes == {("modified", "learned-1"), ("retired", shipped[0].id)}
    assert log.rule_table(shipped).by_id()["learned-1"].conditions[0].value == 4


# ------------------------------------------------------------------------------------------------ observations


def test_estimates_persist_across_processes_per_machine_kind(tmp_path: Path, tables) -> None:
    row = tables.benchmark[("global_adjust", "global_adjustment")]
    first = StoredEstimates(tables, log=ObservationLog(Store(tmp_path)), machine="cpu")
    for _ in range(7):
        first.observe("global_adjust", "global_adjustment", 1.0, 0.5)
    # A new process (new store object, new estimates) starts from what the first one learned.
    again = StoredEstimates(tables, log=ObservationLog(Store(tmp_path)), machine="cpu")
    w = max(3.0, float(row.n))
    seconds, quality = again.get("global_adjust", "global_adjustment")
    assert seconds == pytest.approx((w * row.seconds + 7.0) / (w + 7))
    assert quality == pytest.approx((w * row.quality + 3.5) / (w + 7))
    gpu = StoredEstimates(tables, log=ObservationLog(Store(tmp_path)), machine="gpu")
    assert gpu.get("global_adjust", "global_adjustment") == pytest.approx((row.seconds, row.quality))
    assert again.compare()[0][-1] == 7


def test_induction_runs_once_per_k_tasks_and_the_count_persists(tmp_path: Path) -> None:
    calls: list[int] = []
    services = Services(Settings(calibration_table=fake_table(), home=tmp_path))
    rt = FastSlowRuntime(services, ObservationLog(Store(tmp_path)), induce=lambda n, r: calls.append(n))
    for _ in range(25):
        rt.task_done()
    rt2 = FastSlowRuntime(services, ObservationLog(Store(tmp_path)), induce=lambda n, r: calls.append(n))
    for _ in range(20):
        rt2.task_done()
    assert calls == [20, 40]


# --------------------------------------------------------------------------------------------------- induction


def _trace(ok: bool, path: tuple[str, ...], frac: float, seconds: float = 0.1) -> Trace:
    f = ContextFeatures("object_removal", 100, region_fraction=frac).to_dict()
    return Trace("t", "object_removal", path, seconds, 1.0 if ok else 0.3, ok, "", f, "slow")


def test_statistical_inducer_finds_the_separating_condition() -> None:
    telea = ("grabcut_segment", "remove_telea")
    patch = ("grabcut_segment", "remove_patchmatch")
    traces = [_trace(True, telea, x) for x in (0.02, 0.04, 0.05, 0.06, 0.08)]
    traces += [_trace(False, telea, x) for x in (0.18, 0.2, 0.25)]
    traces += [_trace(True, patch, x, 1.5) for x in (0.02, 0.18, 0.2, 0.25, 0.3)]
    cands = {c.rule.tools: c for c in induce_statistical(traces, RuleTable(()))}
    assert cands[patch].rule.conditions == ()  # always works
    (cond,) = cands[telea].rule.conditions
    assert (cond.feature, cond.op, cond.value) == ("region_fraction", "<=", 0.13)  # midpoint of 0.08 and 0.18
    assert cands[telea].rule.support == 5 and cands[telea].rule.seconds == pytest.approx(0.1)


def test_a_failing_rule_is_retired_only_when_its_kind_keeps_another_rule() -> None:
    path = ("box_mask", "remove_telea")
    only = Rule("only", "object_removal", path)
    fast = lambda ok: replace(_trace(ok, path, 0.1), mode="fast", rule_id="only")  # noqa: E731
    traces = [fast(False) for _ in range(4)] + [fast(True) for _ in range(2)]
    retire = lambda table: [c.rule.id for c in induce_statistical(traces, table) if c.action == "retire"]  # noqa: E731
    # Its fast runs failed 4/6, but it is the kind's one rule: retiring it would leave the kind no fast path.
    assert retire(RuleTable((only,))) == []
    other = Rule("other", "object_removal", ("u2net_box", "remove_telea"))
    assert retire(RuleTable((only, other))) == ["only"]


def test_best_condition_needs_support() -> None:
    f = lambda x: ContextFeatures("k", 1, texture=x)  # noqa: E731
    assert best_condition([(True, f(1)), (False, f(9))], min_support=2) is None


TELEA = ("rapidocr_detect", "text_remove_telea")
PATCH = ("rapidocr_detect", "text_remove_patchmatch")


def _subtask_traces(task: str, texture: float, first_fails: bool) -> list[Trace]:
    """One text-removal subtask: the shipped-style rule (Telea) runs first; where it fails, the local A*'s PatchMatch
    passes afterwards (the traces the fast-slow executor records)."""
    f = ContextFeatures("text_removal", 100, texture=texture, text_length=6).to_dict()
    fast = Trace(task, "text_removal", TELEA, 0.4, 0.3 if first_fails else 1.0, not first_fails, "", f, "fast", "r")
    if not first_fails:
        return [fast]
    return [fast, Trace(task, "text_removal", PATCH, 0.8, 1.0, True, "", f, "slow")]


def test_contrastive_rule_is_learned_where_the_first_choice_fails_in_a_feature_range() -> None:
    table = RuleTable((Rule("r", "text_removal", TELEA, seconds=0.4, quality=0.95),))
    traces = [t for i, x in enumerate((1.0, 2.0, 3.0, 4.0, 5.0, 6.0)) for t in _subtask_traces(f"a{i}", x, False)]
    traces += [t for i, x in enumerate((20.0, 22.0, 25.0, 30.0, 41.0)) for t in _subtask_traces(f"b{i}", x, True)]
    eps = episodes(traces, table)
    assert len(eps) == 11 and sum(not e.first_ok for e in eps) == 5
    (cand,) = induce_contrastive(traces, table)
    rule = cand.rule
    assert cand.inducer == "contrastive" and rule.tools == PATCH and rule.replaces == TELEA
    assert [c.describe() for c in rule.conditions] == ["texture > 13"]  # midpoint of 6 (Telea passed) and 20 (failed)
    assert rule.support == 5 and rule.seconds == pytest.approx(0.8)
    # In force, it takes over from the rule whose path it replaces where it applies, and only there (the shipped
    # rule alone would win on score everywhere: 0.4 s beats 0.8 s).
    both = table.with_rule(rule)
    assert both.choose(ContextFeatures("text_removal", 100, texture=30.0), 1.0).tools == PATCH
    assert both.choose(ContextFeatures("text_removal", 100, texture=3.0), 1.0).tools == TELEA
    # Not enough support: nothing.
    assert induce_contrastive(traces[:-4], table) == []


def test_contrastive_rule_is_not_proposed_when_no_condition_separates() -> None:
    table = RuleTable((Rule("r", "text_removal", TELEA, seconds=0.4, quality=0.95),))
    rng = np.random.default_rng(0)
    traces: list[Trace] = []
    for i in range(40):  # Telea fails at random, whatever the context
        traces += _subtask_traces(f"t{i}", float(rng.uniform(0, 40)), bool(rng.random() < 0.5))
    assert all(c.rule.tools != PATCH or c.inducer != "contrastive" for c in induce_contrastive(traces, table))


def test_proposals_that_fire_nowhere_new_are_not_proposed(tables) -> None:
    shipped = RuleTable(load_shipped_rules(tables))
    f = lambda x: ContextFeatures("global_adjustment", 100, texture=x).to_dict()  # noqa: E731
    traces = [Trace(f"t{i}", "global_adjustment", ("global_adjust",), 0.01, 1.0, True, "", f(x), "fast",
                    "shipped-adjust") for i, x in enumerate((2, 4, 16, 18, 20, 22, 24, 26, 28))]  # fmt: skip
    bad = Trace("u", "global_adjustment", ("global_adjust",), 0.01, 0.3, False, "", f(1), "fast", "shipped-adjust")
    traces += [bad, replace(bad, task="v", features=f(3))]
    # The statistical inducer alone finds "global_adjust when texture > …" (always succeeded there) ...
    assert any(c.rule.tools == ("global_adjust",) for c in induce_statistical(traces, shipped))
    # ... which the shipped "global_adjust always" already covers: not proposed.
    assert [c for c in induce(traces, shipped) if c.action == "add"] == []


def test_verification_accepts_only_negative_benefit_and_refines() -> None:
    telea = Rule("t", "object_removal", ("grabcut_segment", "remove_telea"), seconds=0.1, quality=0.95)
    patch = Rule("p", "object_removal", ("grabcut_segment", "remove_patchmatch"), seconds=1.5, quality=1.0)
    table = RuleTable((patch,))

    class Sample:
        def __init__(self, i: int, frac: float) -> None:
            self.key, self.frac = f"s{i}", frac

    samples = [Sample(i, 0.05 if i < 6 else 0.3) for i in range(8)]

    class Runner:
        alpha = 1.0

        def __call__(self, s: Sample, t: RuleTable) -> SampleResult:
            f = ContextFeatures("object_removal", 100, region_fraction=s.frac)
            r = t.choose(f, 1.0)
            if r.id.startswith("t") and s.frac > 0.1:  # telea fails on large holes: pays it, then patchmatch
                return SampleResult(1.6, 1.0, True, r.id, f)
            return SampleResult(r.seconds, r.quality, True, r.id, f)

    cache: dict = {}
    ok, ev, _ = verify(Candidate("add", telea, ""), table, samples, Runner(), cache)
    # Old: 8 × 1.5 = 12 s, quality 1. New: 6 × 0.1 + 2 × 1.6 = 3.8 s, quality 0.9625 → ΔC −68.3 %, ΔQ −3.75 %.
    assert ev["dC%"] == pytest.approx(-68.33, abs=0.01) and ev["dQ%"] == pytest.approx(-3.75)
    assert ok and ev["B"] < 0
    # A proposal the table would never choose changes nothing and is not accepted.
    worse = Rule("w", "object_removal", ("grabcut_segment", "remove_telea"), seconds=5.0, quality=0.5)
    ok2, ev2, _ = verify(Candidate("add", worse, ""), RuleTable((patch, telea)), samples, Runner(), cache)
    assert ev2["changed"] == 0 and not ok2
    # One that is cheap but fails where holes are large is refined by a condition that excludes them.
    bad = Rule("t3", "object_removal", ("grabcut_segment", "remove_telea"), seconds=0.01, quality=0.85)
    _, _, pairs3 = verify(Candidate("add", bad, ""), table, samples, Runner(), cache)
    refined = refine(Candidate("add", bad, ""), pairs3)
    assert refined is not None and refined.rule.conditions[0].feature == "region_fraction"


def test_llm_inducer_drops_invalid_proposals(tables) -> None:
    from costa.llm_client import LlmClient, LlmConfig
    from tests.fake_openai import FakeOpenAI, chat

    good = {"kind": "text_removal", "tools": ["rapidocr_detect", "text_remove_telea"],
            "conditions": [{"feature": "texture", "op": "<", "value": 5}], "why": "smooth backgrounds"}  # fmt: skip
    bad_tool = {"kind": "text_removal", "tools": ["easyocr_fast", "text_remove_telea"], "conditions": []}
    bad_feature = {"kind": "text_removal", "tools": ["rapidocr_detect", "text_remove_telea"],
                   "conditions": [{"feature": "vibes", "op": "<", "value": 1}]}  # fmt: skip
    with FakeOpenAI([chat({"rules": [good, bad_tool, bad_feature]})]) as fake:
        client = LlmClient(LlmConfig(fake.base_url, None, "fake-model", retries=0))
        cands, calls = induce_llm(client, [_trace(True, ("a",), 0.1)], RuleTable(()), tables)
        assert "subroutine induction" in [c.purpose for c in calls]
        assert "traces" in fake.chat_requests[0]["messages"][0]["content"].lower()
    assert [c.rule.tools for c in cands] == [("rapidocr_detect", "text_remove_telea")]
    assert cands[0].inducer == "llm" and cands[0].rule.conditions[0].describe() == "texture < 5"


# -------------------------------------------------------------------------------------------- fast–slow, real tools


def _object_scene():
    from costa.synthetic.scenes import make_object_scene

    return make_object_scene("texture", "ellipse", height=96, width=128, seed=3)


def run_fast_slow(services, image, plan, runtime, region=None, control=None, task="t1") -> list:
    """A fast–slow turn without reflection (the phase is under test; the ending is tested in tests/test_modes.py)."""
    config = TurnConfig(alpha=1.0, mode="fast-slow", reflect=False)
    return list(
        run_turn(services, image, plan, config, region, env=TurnEnv(control=control, runtime=runtime, task=task))
    )


def _run(services, image, plan, runtime, box):
    from costa.turn.records import UserRegion

    return run_fast_slow(services, image, plan, runtime, UserRegion(boxes=(box,)))


def test_fast_rule_serves_and_a_failing_rule_falls_back_with_its_reason(tmp_path: Path) -> None:
    scene = _object_scene()
    services = Services(Settings(calibration_table=fake_table(), home=tmp_path))
    store = Store(tmp_path)
    runtime = FastSlowRuntime.from_services(services, store, induce=False)
    box = Box(scene.box.x - 4, scene.box.y - 4, scene.box.w + 8, scene.box.h + 8)
    plan = Plan(subtasks=(Subtask(id="s1", kind="object_recoloration", target="object", result="green"),))
    events = _run(services, scene.image, plan, runtime, box)
    hits = [e for e in events if isinstance(e, RuleHit)]
    assert [h.rule_id for h in hits] == ["shipped-recolour-box"]
    done = [e for e in events if isinstance(e, SubtaskDone)]
    assert done and done[0].tools == ("grabcut_segment", "recolor_lab") and done[0].quality >= 0.8
    assert isinstance(events[-1], TurnDone) and events[-1].ok
    # A rule whose last step fails its check on this scene (HSV recolouring over the whole box paints the textured
    # background too): the state rolls back and the local A* serves the subtask.
    bad = Rule("bad", "object_recoloration", ("box_mask", "recolor_hsv"), seconds=1e-4, quality=1.0, source="learned")
    runtime._table = RuleTable((bad,))
    events = _run(services, scene.image, plan, runtime, box)
    fb = [e for e in events if isinstance(e, Fallback)]
    assert fb and fb[0].rule_id == "bad" and fb[0].tool == "recolor_hsv" and "failed its check" in fb[0].reason
    done = [e for e in events if isinstance(e, SubtaskDone)]
    assert done and done[0].tools != ("box_mask", "recolor_hsv") and done[0].quality >= 0.8
    # The fallback pays only for what the rule did not try: box_mask ran once (the turn's memo replays it for the
    # search at 0 s), box_mask → recolor_hsv only in the rule, not in the local A* (which finds another path).
    started = [e for e in events if isinstance(e, ToolStarted)]
    at = events.index(fb[0])
    ran = [e for e in events if isinstance(e, ToolFinished) and e.tool == "box_mask"]
    assert [e.cached for e in ran if events.index(e) < at] == [False]
    assert all(e.cached and e.seconds == 0.0 for e in ran if events.index(e) > at)
    assert [e.attempt for e in started if e.tool == "recolor_hsv"][:1] == [0]  # the rule: first attempt only
    paid = sum(e.seconds for e in events if isinstance(e, ToolFinished))
    assert events[-1].tool_seconds == pytest.approx(paid)
    log = ObservationLog(store)
    traces = log.traces()
    assert any(t.mode == "fast" and not t.success and t.rule_id == "bad" for t in traces)
    assert any(t.mode == "slow" and t.success for t in traces)
    assert all(t.features["kind"] == "object_recoloration" for t in traces)
    assert log.aggregates()[("recolor_lab", "object_recoloration")][0] >= 2


def test_a_rule_step_with_no_alternative_path_runs_its_retries_itself(tmp_path: Path) -> None:

    class FirstAttemptFails(StepExecutor):  # fake outcome: the real tool ran, its first attempt is scored as failing
        def __call__(self, node, parent, attempt):  # type: ignore[no-untyped-def]
            out = super().__call__(node, parent, attempt)
            return replace(out, quality=0.5) if node.tool == "global_adjust" and attempt == 0 else out

    services = Services(Settings(calibration_table=fake_table(), home=tmp_path))
    runtime = FastSlowRuntime.from_services(services, Store(tmp_path), induce=False)
    runtime.executor_class = FirstAttemptFails
    plan = Plan(subtasks=(Subtask(id="s1", kind="global_adjustment", result="brighter"),))
    events = run_fast_slow(services, np.full((48, 64, 3), 90, np.uint8), plan, runtime)
    # global_adjust is the kind's only path, so the rule retries it (the fallback could do nothing else): served fast.
    assert not any(isinstance(e, Fallback) for e in events)
    assert [e.attempt for e in events if isinstance(e, ToolStarted)] == [0, 1]
    assert events[-1].ok and events[-1].executions == 2
    assert events[-1].tool_seconds == pytest.approx(sum(e.seconds for e in events if isinstance(e, ToolFinished)))
    # Where the fallback has another path, the failed step is left out and comes back only when nothing else passes.
    runtime._table = RuleTable((Rule("bad", "object_recoloration", ("box_mask", "recolor_hsv"), seconds=1e-4),))
    scene = _object_scene()
    box = Box(scene.box.x - 4, scene.box.y - 4, scene.box.w + 8, scene.box.h + 8)
    recolour = Plan(subtasks=(Subtask(id="s1", kind="object_recoloration", target="object", result="green"),))
    events = _run(services, scene.image, recolour, runtime, box)
    assert any(isinstance(e, Fallback) for e in events)


def test_a_stopped_rule_step_neither_falls_back_nor_teaches(tmp_path: Path) -> None:
    from costa.models.control import TurnControl

    services = Services(Settings(calibration_table=fake_table(), home=tmp_path))
    store = Store(tmp_path)
    runtime = FastSlowRuntime.from_services(services, store, induce=False)
    control = TurnControl()
    control.stop.set()  # Stop pressed before the turn's first tool call
    plan = Plan(subtasks=(Subtask(id="s1", kind="global_adjustment", result="brighter"),))
    image = np.full((48, 64, 3), 90, np.uint8)
    events = run_fast_slow(services, image, plan, runtime, control=control)
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [e.stopped for e in finished] == [True] and not any(isinstance(e, Fallback) for e in events)
    assert not events[-1].ok
    assert ObservationLog(store).traces() == [] and ObservationLog(store).aggregates() == {}


def test_run_turn_mode_switch_and_cli_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from costa.agent import TurnEnv, run_turn
    from costa.cli import main
    from costa.turn.records import TurnConfig

    monkeypatch.setenv("COSTA_HOME", str(tmp_path))
    services = Services(Settings(calibration_table=fake_table(), home=tmp_path))
    image = np.full((64, 80, 3), 90, np.uint8)
    plan = Plan(subtasks=(Subtask(id="s1", kind="global_adjustment", result="brighter"),))
    events = list(run_turn(services, image, plan, TurnConfig(mode="fast-slow")))
    assert any(isinstance(e, RuleHit) and e.rule_id == "shipped-adjust" for e in events)
    assert events[-1].ok
    log = ObservationLog(Store(tmp_path))
    assert log.counter("tasks") == 1 and len(log.traces()) == 1
    frozen = FastSlowRuntime.from_services(services, Store(tmp_path), induce=False)
    frozen.record = False  # evaluation: nothing learned, stored or counted
    list(run_turn(services, image, plan, TurnConfig(mode="fast-slow"), env=TurnEnv(runtime=frozen)))
    assert log.counter("tasks") == 1 and len(log.traces()) == 1
    out = io.StringIO()
    assert main(["rules", "list"], out) == 0 and "shipped-adjust" in out.getvalue()
    log.append_rules(
        [("add", Rule("learned-x", "global_adjustment", ("global_adjust",), (Condition("texture", ">", 1),)))]
    )
    out = io.StringIO()
    assert main(["rules", "diff", "0", "1"], out) == 0 and "+ learned-x" in out.getvalue()
    out = io.StringIO()
    assert main(["rules", "reset"], out) == 0 and "retired 1" in out.getvalue()
    assert "learned-x" not in {r.id for r in log.rule_table(load_shipped_rules(services.tables)).rules}
    out = io.StringIO()
    assert main(["doctor"], out) == 0 and "table vs learned" in out.getvalue()


def test_chat_notes_name_the_serving_rule_or_the_fallback_reason() -> None:
    from costa.session.view import TurnView

    view = TurnView("edit", {})
    view.apply(RuleHit("s1", "learned-x", ("grabcut_segment", "remove_telea"), 3, 0.2))
    view.apply(Fallback("s2", "rule r: remove_telea failed its check (quality 0.61 below threshold 0.80)", "r"))
    assert view.notes == [
        "s1: fast — rule learned-x (v3): grabcut_segment → remove_telea",
        "s2: slow — local A* (rule r: remove_telea failed its check (quality 0.61 below threshold 0.80))",
    ]


def test_vlm_labels_reach_the_traces_when_an_endpoint_is_configured(tmp_path: Path) -> None:
    from costa.events import LlmCall
    from tests.fake_openai import FakeOpenAI, chat

    labels = {"object_size": "small", "background": "uniform", "text_on_flat_background": "no", "target_occluded": "no"}
    with FakeOpenAI([chat(labels)]) as fake:
        settings = Settings(
            calibration_table=fake_table(),
            home=tmp_path,
            openai_base_url=fake.base_url,
            llm_model="fake-model",
            llm_retries=0,
        )
        services = Services(settings)
        runtime = FastSlowRuntime.from_services(services, Store(tmp_path), induce=False)
        plan = Plan(subtasks=(Subtask(id="s1", kind="global_adjustment", result="brighter"),))
        events = run_fast_slow(services, np.full((48, 64, 3), 90, np.uint8), plan, runtime)
    assert any(isinstance(e, LlmCall) and e.purpose == "context features" for e in events)
    (trace,) = ObservationLog(Store(tmp_path)).traces()
    assert trace.features["labels"]["background"] == "uniform"


def test_the_page_runs_fast_slow_turns_and_the_chat_names_the_rule(tmp_path: Path) -> None:
    from PIL import Image

    from costa.session import MODES, SessionCore, TurnOptions
    from ui.render import chat_messages

    assert "fast-slow" in MODES
    ws = SessionCore(Services(Settings(calibration_table=fake_table(), home=tmp_path)), Store(tmp_path / "store"))
    try:
        path = tmp_path / "grey.png"
        Image.fromarray(np.full((48, 64, 3), 90, np.uint8)).save(path)
        sid = ws.open_session(None, None).id
        ws.upload(sid, None, path)
        opts = TurnOptions.validate(ws.settings, 1.0, 0.8, "fast-slow")
        view = [v for v, _ in ws.run(ws.prepare(sid, None, "Make the image brighter.", opts))][-1]
        assert view.status == "done"
        assert any("fast — rule shipped-adjust" in n for n in view.notes)
        text = json_dumps(chat_messages(view))
        assert "shipped-adjust" in text
    finally:
        ws.close()


def json_dumps(value: object) -> str:
    import json

    return json.dumps(value, default=str)
