"""Search core: hand-computed answers on small graphs, including the CoSTA* recolour demo."""

from __future__ import annotations

import math

import networkx as nx
import pytest

from costa.errors import SearchError
from costa.events import PathChosen, Retry, ToolFailed, ToolFinished
from costa.search import Outcome, SearchPolicy, iter_search, predict_best, score, search_toolpath

# The CoSTA* demo: recolour an object in the input image (seconds, quality from the paper's table).
DEMO = {
    "sd_search_recolor": (14.7, 1.0),
    "grounding_dino": (0.119, 1.0),
    "yolov7": (0.0062, 0.82),
    "sam": (0.046, 1.0),
    "sd_inpaint": (12.1, 0.89),
}


def demo_graph() -> nx.DiGraph:
    """Three paths; the inpaint node is duplicated per detector so each path is its own chain, as in the plan graph."""
    g = nx.DiGraph()
    g.add_edge("START", ("sd_search_recolor",))
    g.add_edge(("sd_search_recolor",), "GOAL")
    for det in ("grounding_dino", "yolov7"):
        g.add_edge("START", (det,))
        g.add_edge((det,), (det, "sam"))
        g.add_edge((det, "sam"), (det, "sam", "sd_inpaint"))
        g.add_edge((det, "sam", "sd_inpaint"), "GOAL")
    return g


def est(node: tuple[str, ...]) -> tuple[float, float]:
    return DEMO[node[-1]]


def exact(node, state, attempt):
    """Execution that measures exactly the table's numbers."""
    c, q = DEMO[node[-1]]
    return Outcome(c, q, state=(state or ()) + (node[-1],))


def test_score_formula() -> None:
    assert score(2.0, 0.5, 1.0) == pytest.approx(2.0 * 1.5)
    assert score(3.0, 1.0, 0.0) == pytest.approx(1.0)
    assert score(3.0, 0.0, 2.0) == pytest.approx(9.0)
    assert score(12.265, 0.89, 1.0) == pytest.approx(12.265 * 1.11)


@pytest.mark.parametrize("alpha", [-0.1, 2.01, math.nan, "1"])
def test_alpha_outside_range_is_rejected(alpha) -> None:
    with pytest.raises(SearchError, match="alpha"):
        score(1.0, 1.0, alpha)
    with pytest.raises(SearchError, match="alpha"):
        search_toolpath(demo_graph(), "START", "GOAL", est, exact, SearchPolicy(alpha))


@pytest.mark.parametrize(
    ("alpha", "path", "seconds", "quality"),
    [
        (0.0, [("sd_search_recolor",)], 14.7, 1.0),
        (1.0, [("grounding_dino",), ("grounding_dino", "sam"), ("grounding_dino", "sam", "sd_inpaint")], 12.265, 0.89),
        (2.0, [("yolov7",), ("yolov7", "sam"), ("yolov7", "sam", "sd_inpaint")], 12.1522, 0.82 * 0.89),
    ],
)
def test_costa_recolour_demo(alpha, path, seconds, quality) -> None:
    r = search_toolpath(demo_graph(), "START", "GOAL", est, exact, SearchPolicy(alpha, threshold=0.7))
    assert list(r.path) == path
    assert r.seconds == pytest.approx(seconds)
    assert r.quality == pytest.approx(quality)
    assert r.state == path[-1]  # the state threaded through execute is the chain of tools run


def test_alpha2_quality_of_yolo_path_is_about_073() -> None:
    r = search_toolpath(demo_graph(), "START", "GOAL", est, exact, SearchPolicy(2.0, threshold=0.7))
    assert r.quality == pytest.approx(0.73, abs=0.005)


def test_lazy_search_runs_only_popped_tools() -> None:
    # α=0: search&recolor's estimate (Q 1.0, score 1) is unbeatable, so nothing else should run.
    ran: list[str] = []

    def execute(node, state, attempt):
        ran.append(node[-1])
        return exact(node, state, attempt)

    r = search_toolpath(demo_graph(), "START", "GOAL", est, execute, SearchPolicy(0.0))
    assert ran == ["sd_search_recolor"]
    assert r.executions == 1


def test_eager_search_pays_for_every_successor() -> None:
    ran: list[str] = []

    def execute(node, state, attempt):
        ran.append(node[-1])
        return exact(node, state, attempt)

    r = search_toolpath(demo_graph(), "START", "GOAL", est, execute, SearchPolicy(0.0, threshold=0.7, lazy=False))
    assert r.path == (("sd_search_recolor",),)
    # Expanding START runs all three first tools before anything is popped.
    assert sorted(ran[:3]) == ["grounding_dino", "sd_search_recolor", "yolov7"]
    assert r.executions > 1


def test_a_final_refusal_is_not_retried() -> None:
    """An attempt that says no other attempt can pass (`final`) drops the step at once: no retry is paid for."""
    calls: list[tuple[str, int]] = []

    def execute(node, state, attempt):
        calls.append((node[-1], attempt))
        if node == ("grounding_dino", "sam", "sd_inpaint"):
            return Outcome(12.1, 0.0, error="target not verified (one click, no outline)", final=True)
        return exact(node, state, attempt)

    events = []
    r = search_toolpath(
        demo_graph(), "START", "GOAL", est, execute, SearchPolicy(1.0, max_attempts=lambda n: 2), on_event=events.append
    )
    assert ("sd_inpaint", 0) in calls and ("sd_inpaint", 1) not in calls
    assert not [e for e in events if isinstance(e, Retry)]
    failures = [e for e in events if isinstance(e, ToolFailed)]
    assert len(failures) == 1 and "after 1 attempt(s)" in failures[0].reason
    assert r.path == (("sd_search_recolor",),)
    assert r.spent_seconds == pytest.approx(0.119 + 0.046 + 12.1 + 14.7)


def test_check_failing_twice_forces_the_alternative_path() -> None:
    # α=1 prefers Grounding DINO → SAM → inpaint; make inpaint after DINO fail its check on both attempts.
    calls: list[tuple[str, int]] = []

    def execute(node, state, attempt):
        calls.append((node[-1], attempt))
        if node == ("grounding_dino", "sam", "sd_inpaint"):
            return Outcome(12.1, 0.4, state=state, reasons=("recolour not visible",))
        return exact(node, state, attempt)

    events = []
    r = search_toolpath(
        demo_graph(), "START", "GOAL", est, execute, SearchPolicy(1.0, max_attempts=lambda n: 2), on_event=events.append
    )
    assert ("sd_inpaint", 0) in calls and ("sd_inpaint", 1) in calls
    retries = [e for e in events if isinstance(e, Retry)]
    failures = [e for e in events if isinstance(e, ToolFailed)]
    assert [(e.tool, e.attempt) for e in retries] == [(str(("grounding_dino", "sam", "sd_inpaint")), 1)]
    assert len(failures) == 1 and "after 2 attempt(s)" in failures[0].reason
    # Next best at α=1: search&recolor scores 14.7 vs YOLO path 12.152 × 1.2702 ≈ 15.44.
    assert r.path == (("sd_search_recolor",),)
    # The two failed inpaint attempts (24.2 s) were paid for but are not on the chosen path.
    assert r.seconds == pytest.approx(14.7)
    assert r.spent_seconds == pytest.approx(0.119 + 0.046 + 12.1 * 2 + 14.7)


def test_retry_that_succeeds_adds_its_cost_to_the_path() -> None:
    def execute(node, state, attempt):
        if node == ("sd_search_recolor",) and attempt == 0:
            return Outcome(14.7, 0.5, state=state)
        return exact(node, state, attempt)

    r = search_toolpath(demo_graph(), "START", "GOAL", est, execute, SearchPolicy(0.0, max_attempts=lambda n: 3))
    assert r.path == (("sd_search_recolor",),)
    assert r.seconds == pytest.approx(29.4)
    assert r.executions == 2


def test_tool_error_is_recorded_and_routed_around() -> None:
    def execute(node, state, attempt):
        if node[-1] == "sd_search_recolor":
            return Outcome(0.5, 0.0, error="service unavailable")
        return exact(node, state, attempt)

    events = []
    r = search_toolpath(
        demo_graph(), "START", "GOAL", est, execute, SearchPolicy(0.0, threshold=0.7), on_event=events.append
    )
    assert r.found and r.path[-1] == ("grounding_dino", "sam", "sd_inpaint")
    finished = [e for e in events if isinstance(e, ToolFinished) and e.tool == "('sd_search_recolor',)"]
    assert finished and not finished[0].passed and "service unavailable" in finished[0].reasons


def test_everything_failing_reports_search_failed() -> None:
    def execute(node, state, attempt):
        return Outcome(1.0, 0.1)

    r = search_toolpath(demo_graph(), "START", "GOAL", est, execute, SearchPolicy(1.0))
    assert not r.found and r.reason == "every tool path failed its checks"
    assert r.executions == 3  # each first tool tried once, then nothing is left


def test_ties_break_by_insertion_order() -> None:
    g = nx.DiGraph([("START", "x"), ("START", "y"), ("x", "GOAL"), ("y", "GOAL")])
    same = lambda n: (1.0, 1.0)  # noqa: E731
    r = search_toolpath(g, "START", "GOAL", same, lambda n, s, a: Outcome(1.0, 1.0), SearchPolicy(1.0))
    assert r.path == ("x",)


def test_measured_values_replace_estimates() -> None:
    # The estimate says a is cheap, but it measures slow: the search must then prefer b.
    g = nx.DiGraph([("START", "a"), ("START", "b"), ("a", "GOAL"), ("b", "GOAL")])
    estimates = {"a": (1.0, 1.0), "b": (2.0, 1.0)}
    measured = {"a": (10.0, 1.0), "b": (2.0, 1.0)}
    ran = []

    def execute(n, s, attempt):
        ran.append(n)
        return Outcome(*measured[n])

    r = search_toolpath(g, "START", "GOAL", lambda n: estimates[n], execute, SearchPolicy(2.0))
    assert ran == ["a", "b"] and r.path == ("b",)
    assert {o.node: o.seconds for o in r.observations} == {"a": 10.0, "b": 2.0}


def test_iter_search_streams_events_before_result() -> None:
    gen = iter_search(demo_graph(), "START", "GOAL", est, exact, SearchPolicy(1.0))
    kinds = []
    try:
        while True:
            kinds.append(next(gen).kind)
    except StopIteration as stop:
        result = stop.value
    assert kinds[0] == "node_queued" and kinds[-1] == "path_chosen"
    assert "tool_finished" in kinds and result.found


def test_predict_best_runs_nothing() -> None:
    path, c, q = predict_best(demo_graph(), "START", "GOAL", est, alpha=1.0)
    assert path[-1] == ("grounding_dino", "sam", "sd_inpaint")
    assert c == pytest.approx(12.265) and q == pytest.approx(0.89)


def test_cyclic_graph_is_rejected() -> None:
    g = nx.DiGraph([("START", "a"), ("a", "b"), ("b", "a"), ("b", "GOAL")])
    with pytest.raises(SearchError, match="acyclic"):
        search_toolpath(g, "START", "GOAL", lambda n: (1, 1), lambda n, s, a: Outcome(1, 1), SearchPolicy(1.0))


def test_path_chosen_event_carries_costs() -> None:
    events = []
    search_toolpath(demo_graph(), "START", "GOAL", est, exact, SearchPolicy(1.0), on_event=events.append)
    chosen = [e for e in events if isinstance(e, PathChosen)]
    assert len(chosen) == 1 and chosen[0].seconds == pytest.approx(12.265)


def test_entry_whose_estimate_improved_is_re_ranked() -> None:
    """A measurement that makes a queued alternative cheaper must move it forward (α=2: score = seconds²).

    Paths: a (est 4.0, measures 4.0); b → m1 → x (est 0.5 + 2.5 + 0.5 = 3.5); c → m2 (est 2.0 + 2.5 = 4.5), where m1
    and m2 are the same step (key "m"). The search tries b first; m measures 0.5, so c's path is now 2.0 + 0.5 = 2.5 s,
    but x measures 10 s. Left at its stale f of 4.5, c would stay behind a and the search would return a's 4.0 s.
    """
    g = nx.DiGraph(
        [
            ("START", "a"),
            ("a", "GOAL"),
            ("START", "b"),
            ("b", "m1"),
            ("m1", "x"),
            ("x", "GOAL"),
            ("START", "c"),
            ("c", "m2"),
            ("m2", "GOAL"),
        ]
    )
    estimates = {"a": 4.0, "b": 0.5, "m1": 2.5, "m2": 2.5, "x": 0.5, "c": 2.0}
    measured = {"a": 4.0, "b": 0.5, "m1": 0.5, "m2": 0.5, "x": 10.0, "c": 2.0}
    ran: list[str] = []

    def execute(n, s, attempt):
        ran.append(n)
        return Outcome(measured[n], 1.0)

    r = search_toolpath(
        g, "START", "GOAL", lambda n: (estimates[n], 1.0), execute, SearchPolicy(2.0, key=lambda n: n.rstrip("12"))
    )
    assert r.path == ("c", "m2")
    assert r.seconds == pytest.approx(2.5)
    assert ran == ["b", "m1", "x", "c", "m2"]
    assert "a" not in ran


def test_prediction_is_the_path_the_search_settles_on_under_the_same_threshold() -> None:
    """The α preview is the search itself on the tables' estimates, threshold included.

    α=1: path p (2.0 s, quality 0.75) scores 2.0 · 1.25 = 2.5, path q (3.0 s, quality 1.0) scores 3.0. A preview that
    ignored the threshold would show p; the search tries p first (lowest f), it fails at 0.8 as its estimate says it
    will, and the search settles on q — which is what the preview shows.
    """
    g = nx.DiGraph([("START", "p"), ("p", "GOAL"), ("START", "q"), ("q", "GOAL")])
    estimates = {"p": (2.0, 0.75), "q": (3.0, 1.0)}
    ran: list[str] = []

    def execute(n, s, attempt):
        ran.append(n)
        return Outcome(*estimates[n])

    path, seconds, quality = predict_best(g, "START", "GOAL", estimates.__getitem__, alpha=1.0, threshold=0.8)
    r = search_toolpath(g, "START", "GOAL", estimates.__getitem__, execute, SearchPolicy(1.0, threshold=0.8))
    assert path == ("q",) and (seconds, quality) == (3.0, 1.0)
    assert ran == ["p", "q"] and r.path == path
    # With no threshold both agree on p.
    assert predict_best(g, "START", "GOAL", estimates.__getitem__, alpha=1.0, threshold=0.0)[0] == ("p",)


def test_a_step_expected_to_fail_is_not_ranked_last_when_it_would_pass() -> None:
    """A cheap path whose one step is estimated just below the threshold is tried in f order, not after every
    expected-to-pass path: when it passes (the estimate is a mean), the search keeps the cheaper path."""
    g = nx.DiGraph([("START", "p"), ("p", "GOAL"), ("START", "q"), ("q", "GOAL")])
    estimates = {"p": (1.0, 0.78), "q": (6.0, 0.95)}
    measured = {"p": (1.0, 0.83), "q": (6.0, 0.95)}
    r = search_toolpath(
        g,
        "START",
        "GOAL",
        estimates.__getitem__,
        lambda n, s, a: Outcome(*measured[n]),
        SearchPolicy(1.0, threshold=0.8),
    )
    assert r.path == ("p",) and r.executions == 1


def test_prediction_keeps_a_doubtful_path_when_it_is_the_only_one() -> None:
    g = nx.DiGraph([("START", "p"), ("p", "GOAL")])
    path, _, quality = predict_best(g, "START", "GOAL", lambda n: (2.0, 0.5), alpha=1.0, threshold=0.8)
    assert path == ("p",) and quality == 0.5


def _layered_graph(width: int) -> nx.DiGraph:
    """START → a0..a{w-1} → b0..b{w-1} (every a to every b) → x → GOAL: more edges than REFRESH_EDGES for width 70."""
    g = nx.DiGraph()
    for i in range(width):
        g.add_edge("START", f"a{i}")
        g.add_edge(f"b{i}", "x")
        for j in range(width):
            g.add_edge(f"a{i}", f"b{j}")
    g.add_edge("x", "GOAL")
    return g


@pytest.mark.parametrize("lazy", [True, False])
def test_a_step_every_path_needs_failing_ends_the_search_on_a_large_graph(lazy: bool) -> None:
    """Every path runs x; once x fails nothing can reach the goal, large graph or small. Large graphs keep their first
    completions, and before a drop reached them the search ran every a → b combination (4,970 runs) before giving
    up."""
    from costa.search import REFRESH_EDGES

    g = _layered_graph(70)
    assert g.number_of_edges() > REFRESH_EDGES

    def estimate(node: str) -> tuple[float, float]:
        return (1.0 + int(node[1:]) / 100, 1.0) if node != "x" else (1.0, 1.0)

    def run(node: str, state: object, attempt: int) -> Outcome:
        return Outcome(*estimate(node)) if node != "x" else Outcome(1.0, 0.0)

    r = search_toolpath(g, "START", "GOAL", estimate, run, SearchPolicy(1.0, lazy=lazy))
    assert not r.found
    assert r.reason == "every tool path failed its checks"
    # lazy: a0, b0, x; eager: every a, then every b after a0, then x.
    assert r.executions == (3 if lazy else 70 + 70 + 1)


def test_completions_updated_after_changes_equal_completions_recomputed() -> None:
    """`update_completions` (only the changed nodes' ancestors) gives what `completions` gives from scratch."""
    import random

    from costa.fronts import FRONT_CAP, completions, update_completions

    rng = random.Random(7)
    for trial in range(30):
        n = 30
        g = nx.DiGraph()
        g.add_nodes_from(range(n))
        for i in range(n):
            g.add_edges_from((i, j) for j in range(i + 1, n) if rng.random() < 0.15)
            if rng.random() < 0.2:
                g.add_edge("S", i)
            if rng.random() < 0.2:
                g.add_edge(i, "G")
        g.add_edge("S", 0)
        g.add_edge(n - 1, "G")
        order = list(nx.topological_sort(g))
        est = {i: (rng.uniform(0.1, 5.0), rng.uniform(0.5, 1.0)) for i in range(n)}
        cap = FRONT_CAP if trial % 2 else 1
        dropped: set[int] = set()
        fronts = completions(order, g, "G", est.__getitem__, dropped, cap)
        position = {m: i for i, m in enumerate(order)}
        for _ in range(8):
            changed = rng.sample(range(n), 2)
            if rng.random() < 0.5:
                dropped.add(changed[0])
            else:
                est[changed[0]] = (rng.uniform(0.1, 5.0), rng.uniform(0.5, 1.0))
            update_completions(fronts, position, g, "G", changed[:1], (est.__getitem__, dropped, cap))
            assert fronts == completions(order, g, "G", est.__getitem__, dropped, cap)
