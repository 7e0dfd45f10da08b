"""Search benchmark: a small run measures what it says, consistently and deterministically."""

from __future__ import annotations

import dataclasses
import functools
import math

import pytest

from bench.search import (
    SearchBenchReport,
    TableRun,
    draw_plans,
    estimate_graph_edges,
    format_report,
    run_search_bench,
    runnable_kinds,
    simulate_outcome,
)
from costa.graph import StepNode, build_plan_graph
from costa.synthetic.tool_tables import make_synthetic_tables
from costa.tables import load_tables

pytestmark = pytest.mark.slow  # two benchmark runs, about 7 s together


@pytest.fixture(scope="module")
def report() -> SearchBenchReport:
    return run_search_bench(seed=1, n_plans=6)


def _runs(report: SearchBenchReport) -> tuple[TableRun, ...]:
    return (report.real, report.synthetic)


def test_lazy_runs_fewer_tools_than_eager(report: SearchBenchReport) -> None:
    # Not a theorem plan by plan: with noisy measurements lazy can trust an optimistic estimate where eager has already
    # measured a cheaper sibling, and on plans where no path passes both end up exhaustive in different orders. On
    # plans that have a path, and in total, lazy must not pay more.
    for run in _runs(report):
        assert run.plans, run.name
        for p in run.plans:
            if p.lazy.found:
                assert p.lazy.executions <= p.eager.executions, (run.name, p.index)
        assert sum(p.lazy.executions for p in run.plans) <= sum(p.eager.executions for p in run.plans), run.name


def test_both_modes_find_the_same_plans(report: SearchBenchReport) -> None:
    for run in _runs(report):
        assert [p.lazy.found for p in run.plans] == [p.eager.found for p in run.plans]
        assert run.lazy.found == run.eager.found
        assert run.lazy.found_rate == run.eager.found_rate == run.lazy.found / len(run.plans)


def test_summaries_agree_with_the_plans(report: SearchBenchReport) -> None:
    for run in _runs(report):
        lazy = [p.lazy for p in run.plans]
        eager = [p.eager for p in run.plans]
        assert run.lazy.executions.mean == pytest.approx(sum(r.executions for r in lazy) / len(lazy))
        assert run.eager.spent_seconds.mean == pytest.approx(sum(r.spent_seconds for r in eager) / len(eager))
        assert run.execution_ratio == pytest.approx(run.lazy.executions.mean / run.eager.executions.mean)
        assert run.spent_ratio == pytest.approx(run.lazy.spent_seconds.mean / run.eager.spent_seconds.mean)
        assert run.score_ratio == pytest.approx(run.lazy.score.mean / run.eager.score.mean)
        assert run.quality_difference == pytest.approx(run.lazy.quality.mean - run.eager.quality.mean)
        found = [r.quality for r in lazy if r.found]
        assert run.lazy.quality.mean == pytest.approx(sum(found) / len(found))
        for p in run.plans:
            assert 1 <= len(p.kinds) <= 8
            for r in (p.lazy, p.eager):
                assert r.executions >= 1 and r.spent_seconds > 0 and r.search_seconds >= 0
                assert (0.0 < r.quality <= 1.0 and math.isfinite(r.score)) if r.found else r.score == math.inf


def test_real_tables_are_never_skipped_and_targets_are_reported(report: SearchBenchReport) -> None:
    assert report.real.skipped == ()
    assert report.real.n_tools == len(load_tables().tools)
    assert report.synthetic.n_tools == 500
    saving = report.targets[0]
    assert saving.value == pytest.approx(1 - report.real.execution_ratio)
    assert saving.met == (saving.value >= 0.40)
    text = format_report(report)
    for t in report.targets:
        assert t.name in text
        assert ("[met]" if t.met else "[MISSED]") in text


def test_same_seed_gives_the_same_numbers(report: SearchBenchReport) -> None:
    again = run_search_bench(seed=1, n_plans=6)

    def timeless(run: TableRun) -> list[tuple[object, ...]]:
        out = []
        for p in run.plans:
            modes = [dataclasses.replace(m, search_seconds=0.0) for m in (p.lazy, p.eager)]
            out.append((p.index, p.kinds, p.form, p.nodes, p.edges, *modes))
        return out

    for a, b in zip(_runs(report), _runs(again), strict=True):
        assert timeless(a) == timeless(b)
        assert a.skipped == b.skipped


def test_simulated_outcome_is_a_function_of_seed_plan_step_and_attempt() -> None:
    t = load_tables()
    node = StepNode(("s1",), ("grounding_dino",), "object_detection", final=True)
    first = simulate_outcome(t, 0, 3, node, 0)
    assert simulate_outcome(t, 0, 3, node, 0) == first
    draws = {simulate_outcome(t, seed, 3, node, 0).seconds for seed in range(5)}
    assert len(draws) == 5  # the seed changes the noise
    qualities = [simulate_outcome(t, 0, i, node, a).quality for i in range(400) for a in (0, 1)]
    assert all(0.0 <= q <= 1.0 for q in qualities)
    always = sum(
        simulate_outcome(t, 0, i, node, 0).quality == 0.3 and simulate_outcome(t, 0, i, node, 1).quality == 0.3
        for i in range(400)
    )
    assert 20 <= always <= 60  # about 10 % of (plan, step) pairs fail every attempt


def test_edge_estimate_is_exact_for_chains_and_an_upper_bound_for_trees() -> None:
    t = load_tables()
    for plan in draw_plans(runnable_kinds(t), 12, seed=2):
        edges = build_plan_graph(t, plan, is_ready=lambda tool: True).graph.number_of_edges()
        estimate = estimate_graph_edges(t, plan)
        assert estimate == edges if plan.form == "chain" else estimate >= edges


def test_synthetic_table_has_the_asked_size_and_every_subtask() -> None:
    base = load_tables()
    t = make_synthetic_tables(base, n_tools=80, seed=4)
    assert len(t.tools) == 80 and set(t.subtasks) == set(base.subtasks)
    assert all(t.tools_for(k) for k in t.subtasks)
    assert make_synthetic_tables(base, n_tools=80, seed=4).benchmark == t.benchmark
    with pytest.raises(ValueError, match="n_tools"):
        make_synthetic_tables(base, n_tools=3)


def test_bad_arguments_are_refused_before_any_work() -> None:
    with pytest.raises(ValueError, match="n_plans=0"):
        run_search_bench(n_plans=0)
    with pytest.raises(ValueError, match="threshold"):
        run_search_bench(threshold=1.5)


def _exact_search(tables, graph, lazy: bool):
    """Search with every tool measuring exactly its table row (no noise, no failures)."""
    from costa.graph import GOAL, START, step_key
    from costa.search import Outcome, SearchPolicy, search_toolpath

    def estimate(node):
        row = tables.benchmark[(node.tool, node.kind)]
        return row.seconds, row.quality

    return search_toolpath(
        graph, START, GOAL, estimate, lambda n, s, a: Outcome(*estimate(n)), SearchPolicy(1.0, lazy=lazy, key=step_key)
    )


def test_lazy_and_eager_choose_equal_scores_when_tools_measure_their_estimates() -> None:
    t = load_tables()
    for plan in draw_plans(runnable_kinds(t), 12, seed=3):
        g = build_plan_graph(t, plan, is_ready=lambda tool: True).graph
        lazy, eager = _exact_search(t, g, True), _exact_search(t, g, False)
        assert lazy.found == eager.found
        if lazy.found:
            assert lazy.score == pytest.approx(eager.score, rel=1e-9)
            assert lazy.executions <= eager.executions


@functools.lru_cache(maxsize=1)
def _seeded_real_run():  # -> bench.search.TableRun; 40 seeded noisy plans on the real tables (≈ 25 s, run once)
    from bench.search import run_table

    return run_table("real", load_tables(), 40, seed=0, alpha=1.0, threshold=0.8)


#: The most lazy's mean chosen-path score may exceed eager's on the seeded plans. The search as it was before lazy
#: ranked doubtful steps by their f (two tiers) scored 1.139 on these plans; today's search 1.025 (see below).
MEAN_SCORE_BOUND = 1.05


def test_lazy_chosen_score_stays_close_to_eager_on_seeded_plans() -> None:
    """With the bench's noisy, failing simulated tools, lazy's chosen paths score close to eager's.

    Plan by plan it cannot be a theorem: eager measures more siblings, so it sees more lucky noise draws than lazy,
    which trusts the tables where it did not run a tool (seeded plan 27: eager's extra runs found an ordering whose
    noise was kinder). With exact tools the two agree plan by plan (the test above); here the bench counts the plans
    where lazy is worse by more than 1 %, and they must stay a minority.
    """
    from bench.search import SCORE_TOLERANCE

    run = _seeded_real_run()
    found = [p for p in run.plans if p.lazy.found]
    assert len(found) >= 12
    assert run.score_ratio <= MEAN_SCORE_BOUND
    worse = [p.index for p in found if p.lazy.score > p.eager.score * (1 + SCORE_TOLERANCE)]
    assert run.lazy_worse_plans == len(worse)
    assert len(worse) <= len(found) // 4, worse


# The search issue's target. On the 68-tool tables (with background blur) lazy's mean is 1.001× eager's at 0.49×
# its executions; on the 67-tool tables it was 1.026× (plan 27, where eager's extra runs of the same steps drew
# luckier noise, and plan 13, a caption check at 0.797 dropped for every ordering) and 1.002× on the 57-tool ones:
# the figure moves with the tables, so this test is the alarm when a table change pushes it back over.
def test_lazy_mean_chosen_score_is_within_one_percent_of_eager() -> None:
    from bench.search import SCORE_TOLERANCE

    assert _seeded_real_run().score_ratio <= 1 + SCORE_TOLERANCE
