"""The campaign's figures against independent computations: Krippendorff's α from its definition (and the published
example), Cohen's weighted κ from its formula, accuracy and costa-vs-humans by hand, conditions and assignment."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from costa.campaign.assign import assign
from costa.campaign.conditions import Condition, parse_conditions
from costa.campaign.records import Campaign, Item, Unit
from costa.campaign.report import CampaignData, build_report, pareto
from costa.campaign.stats import ScoreRow, agreement
from costa.campaign.tasks import TaskSet
from costa.errors import InputError

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the example with missing values: 4 coders, 12
# units; the paper gives α = 0.743 nominal, 0.849 interval.
PAPER = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def _rows(matrix: list[list[float | None]], scale: float = 1.0) -> list[ScoreRow]:
    return [
        ScoreRow(f"i{u // 3}", f"s{u % 3}", f"e{c}", v * scale)
        for c, row in enumerate(matrix)
        for u, v in enumerate(row)
        if v is not None
    ]


def alpha_by_definition(matrix: list[list[float | None]]) -> float:
    """Interval α = 1 − D_o / D_e over pairable values (units with two or more), written from the definition."""
    units = [[row[u] for row in matrix if row[u] is not None] for u in range(len(matrix[0]))]
    units = [u for u in units if len(u) >= 2]
    values = [v for u in units for v in u]
    n = len(values)
    d_o = sum(sum((a - b) ** 2 for a, b in itertools.permutations(u, 2)) / (len(u) - 1) for u in units) / n
    d_e = sum((a - b) ** 2 for a, b in itertools.permutations(values, 2)) / (n * (n - 1))
    return 1 - d_o / d_e


def linear_kappa_by_formula(a: list[int], b: list[int], k: int = 11) -> float:
    """κ_w = 1 − Σ w·O / Σ w·E with w = |i − j| / (k − 1), O the joint proportions, E the product of marginals."""
    observed = np.zeros((k, k))
    for x, y in zip(a, b, strict=True):
        observed[x, y] += 1
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    w = np.abs(np.subtract.outer(np.arange(k), np.arange(k))) / (k - 1)
    return float(1 - (w * observed).sum() / (w * expected).sum())


def test_alpha_matches_the_published_example_and_the_definition() -> None:
    got = agreement(_rows(PAPER, 0.1)).krippendorff_alpha_interval  # interval α does not change with the scale
    assert got == pytest.approx(0.849, abs=5e-4)
    assert got == pytest.approx(alpha_by_definition(PAPER), abs=1e-9)


def test_alpha_and_kappa_match_independent_computations_on_random_scores() -> None:
    rng = random.Random(3)
    levels = [round(i / 10, 1) for i in range(11)]
    for trial in range(5):
        truth = [rng.choice(levels) for _ in range(40)]
        matrix: list[list[float | None]] = []
        for _ in range(3):  # three evaluators: noisy around the truth, some units left unscored
            row: list[float | None] = []
            for t in truth:
                noisy = min(1.0, max(0.0, round(t + rng.choice([-0.2, -0.1, 0, 0, 0.1, 0.3]), 1)))
                row.append(None if rng.random() < 0.25 else noisy)
            matrix.append(row)
        rows = _rows(matrix)
        got = agreement(rows)
        assert got.krippendorff_alpha_interval == pytest.approx(alpha_by_definition(matrix), abs=1e-9), trial
        for pair in got.pairs:
            i, j = (int(e[1:]) for e in pair.evaluators)
            both = [u for u in range(40) if matrix[i][u] is not None and matrix[j][u] is not None]
            a = [round(matrix[i][u] * 10) for u in both]  # type: ignore[operator]
            b = [round(matrix[j][u] * 10) for u in both]  # type: ignore[operator]
            assert pair.n == len(both)
            assert pair.kappa == pytest.approx(linear_kappa_by_formula(a, b), abs=1e-9), (trial, pair)
        mean = sum(p.kappa * p.n for p in got.pairs if p.kappa is not None) / sum(p.n for p in got.pairs)
        assert got.pairwise_cohen_kappa == pytest.approx(mean)


def test_undefined_agreement_is_none_not_a_number() -> None:
    one = agreement([ScoreRow("i", "s1", "a", 1.0), ScoreRow("i", "s2", "a", 0.0)])
    assert one.krippendorff_alpha_interval is None and one.pairs == ()
    same = agreement([ScoreRow("i", f"s{k}", e, 1.0) for k in range(3) for e in "ab"])  # one level throughout
    assert same.krippendorff_alpha_interval is None and same.pairs[0].kappa is None
    apart = agreement([ScoreRow("i", "s1", "a", 1.0), ScoreRow("i", "s2", "b", 0.0)])  # no shared unit
    assert apart.krippendorff_alpha_interval is None and apart.pairs[0].n == 0 and apart.pairwise_cohen_kappa is None


def _data() -> CampaignData:
    conds = (Condition(alpha=0.0), Condition(alpha=2.0))
    campaign = Campaign("c", "f", TaskSet(()), conds, ("a", "b"), 2, 0.0)
    items = [
        Item("x0", "c", 0, "t1", conds[0], "done", "s", tool_seconds=10.0, turn_seconds=12.0),
        Item("y0", "c", 1, "t2", conds[0], "done", "s", tool_seconds=30.0, turn_seconds=33.0),
        Item("x2", "c", 2, "t1", conds[1], "done", "s", tool_seconds=1.0, turn_seconds=2.0),
        Item("y2", "c", 3, "t2", conds[1], "done", "s", tool_seconds=3.0, turn_seconds=4.0),  # never scored
    ]

    def unit(item: str, u: str, kind: str, verdict: str) -> Unit:
        return Unit(item, u, 0, 1, kind, kind.title(), "", verdict, 1, 2)

    units = [
        unit("x0", "t1.s1", "removal", "done"),
        unit("x0", "t1.s2", "recolour", "done"),
        unit("y0", "t1.s1", "removal", "failed"),
        unit("x2", "t1.s1", "removal", "done"),
        unit("x2", "t1.s2", "recolour", "proposed"),
        unit("y2", "t1.s1", "removal", "done"),
    ]
    scores = [
        ScoreRow("x0", "t1.s1", "a", 1.0),
        ScoreRow("x0", "t1.s1", "b", 0.8),
        ScoreRow("x0", "t1.s2", "a", 0.5),
        ScoreRow("x0", "t1.s2", "b", 0.3),
        ScoreRow("y0", "t1.s1", "a", 0.0),
        ScoreRow("x2", "t1.s1", "a", 0.6),
        ScoreRow("x2", "t1.s1", "b", 0.6),
        ScoreRow("x2", "t1.s2", "b", 1.0),
    ]
    return CampaignData(campaign, items, units, scores)


def test_the_report_computes_accuracy_as_costas_human_evaluation_by_hand() -> None:
    report = build_report(_data())
    assert set(report) == {"conditions", "agreement", "costa_vs_humans"}
    a0, a2 = report["conditions"]
    assert set(a0) == {
        "condition",
        "n_items",
        "task_accuracy",
        "subtask_accuracy",
        "tool_seconds_per_task",
        "turn_seconds_per_task",
    }
    # α=0: x0 = mean(0.9, 0.4) = 0.65, y0 = 0.0 → 0.325; removal mean(0.9, 0.0), recolour 0.4; seconds over x0, y0
    assert a0 == {
        "condition": {"alpha": 0.0},
        "n_items": 2,
        "task_accuracy": 0.325,
        "subtask_accuracy": {"Recolour": 0.4, "Removal": 0.45},
        "tool_seconds_per_task": 20.0,
        "turn_seconds_per_task": 22.5,
    }
    # α=2: only x2 is scored (y2 is not in the figures): mean(0.6, 1.0) = 0.8
    assert a2["n_items"] == 1 and a2["task_accuracy"] == 0.8 and a2["tool_seconds_per_task"] == 1.0
    assert set(report["agreement"]) == {"krippendorff_alpha_interval", "pairwise_cohen_kappa", "pairs"}
    cv = report["costa_vs_humans"]
    # removal: x0 done & 0.9 right (agree), y0 failed & 0.0 (agree), x2 done & 0.6 not right (false done)
    assert cv["per_kind"]["removal"] == {
        "n": 3,
        "agreed": 2,
        "costa_done": 2,
        "humans_right": 1,
        "false_done": 1,
        "agreement": 0.6667,
    }
    # recolour: x0 done but 0.4 (false done), x2 proposed and 1.0 right (costa did not vouch: disagreement)
    assert cv["per_kind"]["recolour"]["agreed"] == 0 and cv["per_kind"]["recolour"]["false_done"] == 1
    assert cv["overall"] == {"n": 5, "agreed": 2, "costa_done": 3, "false_done": 2, "agreement": 0.4}


def test_pareto_frontier_keeps_what_nothing_beats_on_cost_and_quality() -> None:
    pts = [(10.0, 0.9), (1.0, 0.5), (5.0, 0.4), (2.0, 0.7), (10.0, 0.95)]
    assert pareto(pts) == [1, 3, 4]


def test_conditions_are_the_product_of_the_listed_values_and_refuse_bad_ones() -> None:
    conds = parse_conditions("alpha=0,1,2; mode=lazy,fast-slow; reflect=on,off")
    assert len(conds) == 12 and len(set(conds)) == 12
    assert conds[0].as_dict() == {"alpha": 0.0, "mode": "lazy", "reflect": True}
    assert conds[-1].label == "alpha=2 · mode=fast-slow · reflect=off"
    assert Condition.from_dict(conds[5].as_dict()) == conds[5]
    for bad, msg in [
        ("alpha=3", r"in \[0, 2\]"),
        ("mode=greedy", "mode must be one of"),
        ("reflect=maybe", "on or off"),
        ("alpha=0; alpha=1", "given twice"),
        ("alpha=1,1", "a value twice"),
        ("speed=1", "expected KEY=v1,v2"),
        ("alpha=", "lists no value"),
    ]:
        with pytest.raises(InputError, match=msg):
            parse_conditions(bad)


def test_assignment_is_balanced_over_evaluators_and_conditions_in_a_random_order_each() -> None:
    items = [(f"i{n}", f"c{n % 3}") for n in range(60)]
    queues = assign(items, ["ann", "bob", "cy"], 2, seed="camp")
    assert {len(q) for q in queues.values()} == {40}  # 60 items × 2 / 3 evaluators
    per_item = Counter(i for q in queues.values() for i in q)
    assert set(per_item.values()) == {2} and len(per_item) == 60
    conditions = dict(items)
    for q in queues.values():
        counts = Counter(conditions[i] for i in q)
        assert max(counts.values()) - min(counts.values()) <= 1
    pairs = Counter(frozenset(e for e, q in queues.items() if i in q) for i, _ in items)
    assert len(pairs) == 3 and max(pairs.values()) - min(pairs.values()) <= 1  # every pair shares items
    orders = [[conditions[i] for i in q] for q in queues.values()]
    assert orders[0] != orders[1] != orders[2]  # not the same order of conditions for everyone
    assert assign(items, ["ann", "bob", "cy"], 2, seed="camp") == queues  # reproducible
    with pytest.raises(InputError, match="1 … 3 of the named"):
        assign(items, ["ann", "bob", "cy"], 4, seed="x")
    with pytest.raises(InputError, match="listed twice"):
        assign(items, ["ann", "ann"], 1, seed="x")


def test_the_plot_is_a_png(tmp_path: Path) -> None:
    from costa.campaign.report import plot

    plot(build_report(_data()), tmp_path / "p.png")
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_cost_axis_labels_the_conditions_own_costs_without_overprinting() -> None:
    from costa.campaign.report import cost_ticks

    assert cost_ticks([0.2497, 0.4093, 0.3984]) == [0.25, 0.4]  # 0.41 would print over 0.4
    assert cost_ticks([0.5, 12.0, 130.0, 0.0]) == [0.5, 12.0, 130.0]
    assert cost_ticks([]) == []
