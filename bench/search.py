"""Search benchmark: lazy against eager expansion, and the search's own overhead, measured in one run.

Plans of 1–8 subtasks are drawn (seeded) over the kinds that have a tool chain with no user region, half as chains and
half as trees (so CoSTA*'s alternative orderings are in the graph). Every tool counts as available, so the graph is
the paper-sized one in which neural, API and embedded alternatives compete. Execution is simulated: a step's seconds and
quality are its benchmark row with seeded noise (seconds × lognormal(0, 0.2), quality + normal(0, 0.05) clipped to
[0, 1]); 10 % of (plan, step) pairs fail every attempt (quality 0.3) and another 10 % fail only their first attempt.
The noise is a pure function of (seed, plan index, step, attempt), so the lazy search and the eager baseline see
identical outcomes for the same step, and the same seed gives the same numbers (wall times aside).

Measured, per plan, for both modes: tool executions, tool-seconds spent (every attempt, retries included), the chosen
path's quality and score, and whether a path was found; per subtask: the wall time of the search with the simulated
execution's own time taken out, and the time `build_plan_graph` took. The same is done on a seeded synthetic
500-tool table (`costa.synthetic.tool_tables`) to see how both scale.

Example:
    >>> r = run_search_bench(seed=0, n_plans=2, synthetic_plans=1, synthetic_tools=60)
    >>> r.real.lazy.found == r.real.eager.found
    True
"""

from __future__ import annotations

import argparse
import hashlib
import math
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from costa.events import drain
from costa.graph import (
    DEFAULT_MAX_CHAIN,
    GOAL,
    START,
    StepNode,
    build_plan_graph,
    plan_orderings,
    step_key,
    subtask_chains,
)
from costa.search import Outcome, SearchPolicy, SearchResult, check_alpha, iter_search
from costa.synthetic.tool_tables import make_synthetic_tables
from costa.tables import Tables, load_tables
from costa.types import Plan, Subtask

LAZY_SAVING_TARGET = 0.40  # fraction fewer tool executions per task than eager
QUALITY_TOLERANCE = 0.01  # chosen-path quality differences (mean, absolute) this small count as equal
SCORE_TOLERANCE = 0.01  # lazy/eager mean chosen-path score ratios within 1 % of 1 count as equal
REAL_OVERHEAD_TARGET_MS = 5.0  # search wall time per subtask, real tables
SYNTHETIC_OVERHEAD_TARGET_MS = 100.0  # search wall time per subtask, synthetic 500-tool table
MAX_SUBTASKS = 8
MAX_GRAPH_EDGES = 500_000  # plans whose graph would be larger are reported as skipped, not built (it takes minutes)
SECONDS_SIGMA = 0.2  # lognormal sigma of the seconds noise
QUALITY_SIGMA = 0.05  # normal sigma of the quality noise
PERSISTENT_FAILURE_SHARE = 0.10  # (plan, step) pairs that fail every attempt
FIRST_ATTEMPT_FAILURE_SHARE = 0.10  # (plan, step) pairs that fail only attempt 0
FAILED_QUALITY = 0.3


# ------------------------------------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Stat:
    """Mean and median of a sample (NaN when the sample is empty)."""

    mean: float
    median: float

    @staticmethod
    def of(values: Sequence[float]) -> Stat:
        """Return the mean and median of `values`."""
        if not values:
            return Stat(math.nan, math.nan)
        return Stat(statistics.fmean(values), statistics.median(values))


@dataclass(frozen=True)
class ModeRun:
    """One search of one plan in one mode.

    `quality` is the chosen path's quality (product of step qualities, 0 when none was found); `score` its score (inf
    when none); `spent_seconds` the simulated tool-seconds of every execution; `search_seconds` the wall seconds the
    search itself took, simulated execution excluded.
    """

    found: bool
    executions: int
    spent_seconds: float
    quality: float
    score: float
    search_seconds: float


@dataclass(frozen=True)
class PlanRecord:
    """One drawn plan: its kinds and form, its graph's size and build time (seconds), and both searches."""

    index: int
    kinds: tuple[str, ...]
    form: str
    nodes: int
    edges: int
    build_seconds: float
    lazy: ModeRun
    eager: ModeRun


@dataclass(frozen=True)
class ModeSummary:
    """Per-task statistics of one mode over all plans; quality and score over the plans where a path was found."""

    executions: Stat
    spent_seconds: Stat
    quality: Stat
    score: Stat
    found: int
    found_rate: float
    search_ms_per_subtask: Stat


@dataclass(frozen=True)
class SkippedPlan:
    """A drawn plan whose graph was not built because its estimated size exceeded the cap (edges)."""

    index: int
    kinds: tuple[str, ...]
    form: str
    estimated_edges: int


@dataclass(frozen=True)
class TableRun:
    """All plans searched on one table, both modes, with lazy/eager ratios of the per-task means.

    `chains_per_kind` counts tool chains per runnable subtask kind (what the plan graph multiplies);
    `build_ms_per_subtask` is the `build_plan_graph` wall time per subtask in milliseconds. Plans whose graph would
    have more than `max_edges` edges are not built and are listed in `skipped`; `overhead_ms_median` is the median lazy
    search milliseconds per subtask with each skipped plan counted as infinitely slow, so a skip never hides a miss.
    """

    name: str
    n_tools: int
    max_chain: int
    max_edges: int
    plans: tuple[PlanRecord, ...]
    skipped: tuple[SkippedPlan, ...]
    lazy: ModeSummary
    eager: ModeSummary
    execution_ratio: float
    spent_ratio: float
    score_ratio: float
    quality_difference: float  # lazy mean quality − eager mean quality
    lazy_more_plans: int  # plans on which lazy ran more tools than eager
    lazy_worse_plans: int  # plans on which lazy's chosen path scores more than SCORE_TOLERANCE worse than eager's
    build_ms_per_subtask: Stat
    overhead_ms_median: float
    chains_per_kind: Stat
    max_chains_per_kind: int


@dataclass(frozen=True)
class Target:
    """One target from the issue: the measured value, the goal in words, and whether it was met."""

    name: str
    value: float
    goal: str
    met: bool


@dataclass(frozen=True)
class SearchBenchReport:
    """Everything one benchmark run measured."""

    seed: int
    n_plans: int
    alpha: float
    threshold: float
    real: TableRun
    synthetic: TableRun
    targets: tuple[Target, ...]


# ----------------------------------------------------------------------------------------------------- simulation


def _draw_seed(*parts: Any) -> int:
    """Stable 64-bit seed from structured parts (Python's own `hash` is salted per process)."""
    return int.from_bytes(hashlib.blake2b(repr(parts).encode(), digest_size=8).digest(), "big")


def simulate_outcome(tables: Tables, seed: int, plan_index: int, node: StepNode, attempt: int) -> Outcome:
    """Return the simulated outcome of one attempt of one step: a pure function of its arguments.

    Seconds are the benchmark row's × lognormal(0, 0.2); quality is the row's + normal(0, 0.05), clipped to [0, 1],
    or 0.3 for a step drawn to fail (every attempt for 10 % of steps, the first attempt only for another 10 %).
    Whether a step fails is a property of its tool chain on its subtask (whatever ordering led there), as the search
    assumes when it drops a failed step for that subtask; the noise is drawn per graph node.
    """
    row = tables.benchmark[(node.tool, node.kind)]
    fate = random.Random(_draw_seed(seed, plan_index, node.subtask_id, node.tools, "fate")).random()
    rng = random.Random(_draw_seed(seed, plan_index, node.order, node.tools, attempt))
    seconds = row.seconds * rng.lognormvariate(0.0, SECONDS_SIGMA)
    quality = min(1.0, max(0.0, row.quality + rng.gauss(0.0, QUALITY_SIGMA)))
    if fate < PERSISTENT_FAILURE_SHARE or (
        fate < PERSISTENT_FAILURE_SHARE + FIRST_ATTEMPT_FAILURE_SHARE and attempt == 0
    ):
        quality = FAILED_QUALITY
    return Outcome(seconds, quality, state=None)


class SimulatedExecution:
    """The `execute` callback for one plan; records the wall seconds spent inside it so they can be taken out."""

    def __init__(self, tables: Tables, seed: int, plan_index: int) -> None:
        self.tables, self.seed, self.plan_index = tables, seed, plan_index
        self.wall_seconds = 0.0

    def __call__(self, node: StepNode, state: Any, attempt: int) -> Outcome:
        t0 = time.perf_counter()
        out = simulate_outcome(self.tables, self.seed, self.plan_index, node, attempt)
        self.wall_seconds += time.perf_counter() - t0
        return out


# ---------------------------------------------------------------------------------------------------------- plans


def runnable_kinds(tables: Tables, max_chain: int = DEFAULT_MAX_CHAIN) -> tuple[str, ...]:
    """Subtask kinds with at least one tool chain from the image alone, every tool counted as available."""
    return tuple(k for k in tables.subtasks if subtask_chains(tables, k, frozenset(), lambda t: True, max_chain))


def estimate_graph_edges(tables: Tables, plan: Plan, max_chain: int = DEFAULT_MAX_CHAIN) -> int:
    """Upper bound on the edges `build_plan_graph` would make, from chain counts alone (no graph is built).

    Per ordering: each chain's internal edges, plus every end of one subtask joined to every first tool of the next;
    prefixes shared between orderings are counted once per ordering, so this over-counts tree plans.
    """
    chains = {s.id: subtask_chains(tables, s.kind, frozenset(), lambda t: True, max_chain) for s in plan.subtasks}
    total = 0
    for ordering in plan_orderings(plan):
        ends = 1  # START
        for sid in (i for i in ordering if chains[i]):
            prefixes = {c[:k] for c in chains[sid] for k in range(1, len(c) + 1)}
            firsts = {c[0] for c in chains[sid]}
            total += ends * len(firsts) + len(prefixes) - len(firsts)
            ends = len(chains[sid])
        total += ends  # to GOAL
    return total


def draw_plans(kinds: Sequence[str], n_plans: int, seed: int) -> list[Plan]:
    """Draw `n_plans` plans of 1–8 subtasks over `kinds`: even indices chains, odd indices trees with random parents."""
    rng = random.Random(_draw_seed(seed, "plans"))
    plans = []
    for i in range(n_plans):
        n = rng.randint(1, MAX_SUBTASKS)
        subtasks = []
        for j in range(n):
            parents = (f"s{rng.randint(1, j)}",) if i % 2 and j and rng.random() < 0.5 else ()
            subtasks.append(Subtask(id=f"s{j + 1}", kind=rng.choice(kinds), parents=parents))
        plans.append(Plan(subtasks=tuple(subtasks), form="tree" if i % 2 else "chain"))
    return plans


# ---------------------------------------------------------------------------------------------------------- runs


def _label(node: Any) -> tuple[str, str]:
    """(subtask id, tool id) of a step for events, as the agent labels them."""
    return (node.subtask_id, node.tool) if isinstance(node, StepNode) else ("", str(node))


def _search(tables: Tables, graph: Any, seed: int, index: int, alpha: float, threshold: float, lazy: bool) -> ModeRun:
    """Search `graph` once with simulated execution, as the agent drives `iter_search`; time it without execution."""
    sim = SimulatedExecution(tables, seed, index)

    def estimate(node: StepNode) -> tuple[float, float]:
        row = tables.benchmark[(node.tool, node.kind)]
        return row.seconds, row.quality

    def max_attempts(node: StepNode) -> int:
        return tables.tools[node.tool].max_attempts

    t0 = time.perf_counter()
    policy = SearchPolicy(alpha, threshold, max_attempts, lazy, _label, step_key)
    gen = iter_search(graph, START, GOAL, estimate, sim, policy)
    r: SearchResult = drain(gen)  # consume the events as a consumer would, so building them counts as overhead
    wall = time.perf_counter() - t0 - sim.wall_seconds
    return ModeRun(r.found, r.executions, r.spent_seconds, r.quality, r.score, wall)


def _summarise(runs: Sequence[ModeRun], sizes: Sequence[int]) -> ModeSummary:
    found = [r for r in runs if r.found]
    return ModeSummary(
        executions=Stat.of([r.executions for r in runs]),
        spent_seconds=Stat.of([r.spent_seconds for r in runs]),
        quality=Stat.of([r.quality for r in found]),
        score=Stat.of([r.score for r in found]),
        found=len(found),
        found_rate=len(found) / len(runs) if runs else math.nan,
        search_ms_per_subtask=Stat.of([1e3 * r.search_seconds / n for r, n in zip(runs, sizes, strict=True)]),
    )


def _ratio(a: float, b: float) -> float:
    return a / b if b else math.nan


def run_table(
    name: str,
    tables: Tables,
    n_plans: int,
    seed: int,
    alpha: float,
    threshold: float,
    max_chain: int = DEFAULT_MAX_CHAIN,
    max_edges: int = MAX_GRAPH_EDGES,
) -> TableRun:
    """Draw `n_plans` plans over `tables`, build each graph once and search it lazily and eagerly.

    Args:
        max_chain: longest tool chain, in tools (passed to `build_plan_graph`).
        max_edges: plans whose estimated graph has more edges are skipped (and reported), not built.
    """
    kinds = runnable_kinds(tables, max_chain)
    chains = [len(subtask_chains(tables, k, frozenset(), lambda t: True, max_chain)) for k in kinds]
    records: list[PlanRecord] = []
    skipped: list[SkippedPlan] = []
    for i, plan in enumerate(draw_plans(kinds, n_plans, seed)):
        kinds_i = tuple(s.kind for s in plan.subtasks)
        size = estimate_graph_edges(tables, plan, max_chain)
        if size > max_edges:
            skipped.append(SkippedPlan(i, kinds_i, plan.form, size))
            continue
        t0 = time.perf_counter()
        g = build_plan_graph(tables, plan, is_ready=lambda t: True, max_chain=max_chain).graph
        build = time.perf_counter() - t0
        lazy = _search(tables, g, seed, i, alpha, threshold, lazy=True)
        eager = _search(tables, g, seed, i, alpha, threshold, lazy=False)
        records.append(PlanRecord(i, kinds_i, plan.form, g.number_of_nodes(), g.number_of_edges(), build, lazy, eager))
    sizes = [len(r.kinds) for r in records]
    lazy_s = _summarise([r.lazy for r in records], sizes)
    eager_s = _summarise([r.eager for r in records], sizes)
    overhead = [1e3 * r.lazy.search_seconds / len(r.kinds) for r in records] + [math.inf] * len(skipped)
    return TableRun(
        name=name,
        n_tools=len(tables.tools),
        max_chain=max_chain,
        max_edges=max_edges,
        plans=tuple(records),
        skipped=tuple(skipped),
        lazy=lazy_s,
        eager=eager_s,
        execution_ratio=_ratio(lazy_s.executions.mean, eager_s.executions.mean),
        spent_ratio=_ratio(lazy_s.spent_seconds.mean, eager_s.spent_seconds.mean),
        score_ratio=_ratio(lazy_s.score.mean, eager_s.score.mean),
        quality_difference=lazy_s.quality.mean - eager_s.quality.mean,
        lazy_more_plans=sum(r.lazy.executions > r.eager.executions for r in records),
        lazy_worse_plans=sum(
            r.lazy.found and r.eager.found and r.lazy.score > r.eager.score * (1 + SCORE_TOLERANCE) for r in records
        ),
        build_ms_per_subtask=Stat.of([1e3 * r.build_seconds / len(r.kinds) for r in records]),
        overhead_ms_median=statistics.median(overhead) if overhead else math.nan,
        chains_per_kind=Stat.of(chains),
        max_chains_per_kind=max(chains, default=0),
    )


def run_search_bench(
    seed: int = 0,
    n_plans: int = 40,
    alpha: float = 1.0,
    threshold: float = 0.8,
    *,
    synthetic_plans: int | None = None,
    synthetic_tools: int = 500,
    synthetic_max_chain: int = DEFAULT_MAX_CHAIN,
    tables: Tables | None = None,
) -> SearchBenchReport:
    """Run the whole search benchmark: lazy vs eager on the real tables, and both on a synthetic table.

    Args:
        seed: seeds the plans, the simulated outcomes and the synthetic table.
        n_plans: plans drawn on the real tables (≥ 30 for the issue's measurement).
        alpha: cost/quality trade-off in [0, 2].
        threshold: a step passes when its quality ≥ threshold.
        synthetic_plans: plans drawn on the synthetic table (default: `n_plans`).
        synthetic_tools: tools in the synthetic table.
        synthetic_max_chain: longest tool chain on the synthetic table, in tools.
        tables: the real tables (default: `load_tables()`).

    Raises:
        ValueError: a plan count below 1 or a threshold outside [0, 1].
        SearchError: alpha outside [0, 2].
    """
    check_alpha(alpha)
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be in [0, 1], got {threshold}")
    if n_plans < 1 or (synthetic_plans is not None and synthetic_plans < 1):
        raise ValueError(f"plan counts must be >= 1, got n_plans={n_plans}, synthetic_plans={synthetic_plans}")
    real_tables = tables if tables is not None else load_tables()
    real = run_table("real", real_tables, n_plans, seed, alpha, threshold)
    syn_tables = make_synthetic_tables(real_tables, synthetic_tools, seed)
    n_syn = n_plans if synthetic_plans is None else synthetic_plans
    synthetic = run_table(
        f"synthetic-{synthetic_tools}", syn_tables, n_syn, seed, alpha, threshold, synthetic_max_chain
    )
    saving = 1.0 - real.execution_ratio
    targets = (
        Target(
            "lazy saves executions (real tables)",
            saving,
            f">= {LAZY_SAVING_TARGET:.0%} fewer than eager",
            saving >= LAZY_SAVING_TARGET,
        ),
        Target(
            "equal chosen-path quality (real tables)",
            real.quality_difference,
            f"|lazy - eager mean quality| <= {QUALITY_TOLERANCE}",
            abs(real.quality_difference) <= QUALITY_TOLERANCE,
        ),
        Target(
            "chosen-path score, lazy / eager mean (real tables; lower is better)",
            real.score_ratio,
            f"<= {1 + SCORE_TOLERANCE:g}: lazy no more than {SCORE_TOLERANCE:.0%} worse",
            real.score_ratio <= 1.0 + SCORE_TOLERANCE,
        ),
        Target(
            "search overhead per subtask, real tables (ms, median)",
            real.overhead_ms_median,
            f"< {REAL_OVERHEAD_TARGET_MS:g} ms",
            real.overhead_ms_median < REAL_OVERHEAD_TARGET_MS,
        ),
        Target(
            f"search overhead per subtask, {synthetic.name} (ms, median)",
            synthetic.overhead_ms_median,
            f"< {SYNTHETIC_OVERHEAD_TARGET_MS:g} ms, skipped plans counted as over",
            synthetic.overhead_ms_median < SYNTHETIC_OVERHEAD_TARGET_MS,
        ),
    )
    return SearchBenchReport(seed, n_plans, alpha, threshold, real, synthetic, targets)


# ------------------------------------------------------------------------------------------------------- report


def _fmt(x: float, digits: int = 3) -> str:
    return "n/a" if math.isnan(x) else f"{x:.{digits}g}"


def _table_lines(run: TableRun, per_plan: bool) -> list[str]:
    lz, eg = run.lazy, run.eager
    n = len(run.plans)
    subtasks = sum(len(p.kinds) for p in run.plans)
    rows: list[tuple[str, Callable[[ModeSummary], Stat], int]] = [
        ("tool executions / task", lambda m: m.executions, 4),
        ("tool-seconds spent / task", lambda m: m.spent_seconds, 4),
        ("chosen-path quality", lambda m: m.quality, 4),
        ("chosen-path score", lambda m: m.score, 4),
        ("search ms / subtask", lambda m: m.search_ms_per_subtask, 3),
    ]
    nodes = [p.nodes for p in run.plans] or [0]
    edges = [p.edges for p in run.plans] or [0]
    lines = [
        f"== {run.name}: {run.n_tools} tools; {n} plans searched ({subtasks} subtasks), {len(run.skipped)} skipped; "
        f"max_chain {run.max_chain}; tool chains per kind mean {_fmt(run.chains_per_kind.mean)}, "
        f"max {run.max_chains_per_kind}",
        f"   graph nodes median {statistics.median(nodes):.0f} max {max(nodes)}, edges median "
        f"{statistics.median(edges):.0f} max {max(edges)}; build_plan_graph ms / subtask mean "
        f"{_fmt(run.build_ms_per_subtask.mean)} median {_fmt(run.build_ms_per_subtask.median)} (not in search ms)",
    ]
    for sk in run.skipped:
        lines.append(
            f"   skipped plan {sk.index} ({sk.form}, {len(sk.kinds)} subtasks): ~{sk.estimated_edges:,} edges "
            f"> cap {run.max_edges:,}"
        )
    lines.append(f"   {'per task':<28}{'lazy mean':>12}{'eager mean':>12}{'lazy med':>12}{'eager med':>12}{'ratio':>9}")
    for label, get, digits in rows:
        a, b = get(lz), get(eg)
        lines.append(
            f"   {label:<28}{_fmt(a.mean, digits):>12}{_fmt(b.mean, digits):>12}"
            f"{_fmt(a.median, digits):>12}{_fmt(b.median, digits):>12}{_fmt(_ratio(a.mean, b.mean)):>9}"
        )
    lines.append(f"   {'found':<28}{f'{lz.found}/{n}':>12}{f'{eg.found}/{n}':>12}")
    lines.append(
        f"   lazy/eager: executions {_fmt(run.execution_ratio)} (saving {_fmt(100 * (1 - run.execution_ratio))} %), "
        f"tool-seconds {_fmt(run.spent_ratio)}, score {_fmt(run.score_ratio)}, "
        f"quality difference {run.quality_difference:+.4f}; plans where lazy ran more tools: {run.lazy_more_plans}; "
        f"plans where lazy's path scores > {SCORE_TOLERANCE:.0%} worse: {run.lazy_worse_plans}"
    )
    if per_plan:
        lines.append(
            f"   {'plan':>6} {'form':<6}{'n':>3}{'nodes':>8}{'lazy ex':>9}{'eager ex':>9}{'lazy ms':>9}  found"
        )
        for p in run.plans:
            lines.append(
                f"   {p.index:>6} {p.form:<6}{len(p.kinds):>3}{p.nodes:>8}{p.lazy.executions:>9}"
                f"{p.eager.executions:>9}{1e3 * p.lazy.search_seconds:>9.2f}  {p.lazy.found}"
            )
    return lines


def format_report(report: SearchBenchReport, per_plan: bool = False) -> str:
    """Return the report as readable text: both tables, the lazy/eager ratios, and each target met or missed.

    Args:
        per_plan: also list every plan's graph size, executions and search milliseconds.
    """
    lines = [
        f"costa search benchmark: seed {report.seed}, alpha {report.alpha:g}, threshold {report.threshold:g}",
        f"simulated execution: seconds x lognormal(0, {SECONDS_SIGMA}), quality + normal(0, {QUALITY_SIGMA}); "
        f"{PERSISTENT_FAILURE_SHARE:.0%} of steps fail every attempt, {FIRST_ATTEMPT_FAILURE_SHARE:.0%} their first",
        "search ms exclude simulated execution; ratios are lazy mean / eager mean per task",
        "",
        *_table_lines(report.real, per_plan),
        "",
        *_table_lines(report.synthetic, per_plan),
        "",
        "targets:",
    ]
    for t in report.targets:
        lines.append(f"   [{'met' if t.met else 'MISSED'}] {t.name}: {t.value:.4g} (goal {t.goal})")
    return "\n".join(lines)


HELP = "lazy vs eager A* on seeded simulated plans; search overhead on the real and a 500-tool table"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare this benchmark's options."""
    p.add_argument("--seed", type=int, default=0, help="seeds plans, simulated outcomes and the synthetic table")
    p.add_argument("--plans", type=int, default=40, help="plans on the real tables (default 40)")
    p.add_argument("--synthetic-plans", type=int, default=None, help="plans on the synthetic table (default --plans)")
    p.add_argument("--synthetic-tools", type=int, default=500, help="tools in the synthetic table (default 500)")
    p.add_argument("--alpha", type=float, default=1.0, help="cost/quality trade-off in [0, 2] (default 1)")
    p.add_argument("--threshold", type=float, default=0.8, help="quality a step must reach (default 0.8)")
    p.add_argument("--per-plan", action="store_true", help="also list every plan")


def run(args: argparse.Namespace) -> int:
    """Run, print the report; 0 always (the report says which targets were met)."""
    report = run_search_bench(
        seed=args.seed,
        n_plans=args.plans,
        alpha=args.alpha,
        threshold=args.threshold,
        synthetic_plans=args.synthetic_plans,
        synthetic_tools=args.synthetic_tools,
    )
    print(format_report(report, per_plan=args.per_plan))
    return 0
