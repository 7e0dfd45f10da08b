"""Verification of induced subroutines (FaSTA*'s offline learning), and one induction round.

**Verification** (`verify`): a proposal is run against the current table on fresh samples (25 for image subtasks, 20
for text ones) and accepted only if B(Δ) = ΔC% − ΔQ% < 0, where ΔC% is the change of total cost — tool-seconds plus
the wall seconds of choosing a rule and of the local search (a subtask served fast skips the search) — and ΔQ% the
change of mean quality (failed subtasks count 0). A rejected proposal is refined up to twice with the samples where
it did worse as feedback (a condition that excludes them). Every attempt is recorded in the store with its figures.

`SampleRunner` serves one sample's subtask fast–slow under a given table with real tools and checks (the turn's own
search and executor; nothing is learned from it); the samples come from `costa.synthetic.fasta_tasks.samples`, the
product's verification stream. `induce_and_verify` runs one round: propose (`costa.subroutines.mining`), verify,
record, apply the accepted ones.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from costa.events import InductionDone, drain
from costa.subroutines.executor import SubtaskRun, serve_subtask
from costa.subroutines.features import ContextFeatures, compute_features
from costa.subroutines.mining import Candidate, best_condition, induce, induce_llm, rule_id
from costa.subroutines.rules import Rule, RuleTable
from costa.turn.records import TurnState, UserRegion
from costa.types import EditState, Plan

if TYPE_CHECKING:
    from costa.subroutines.runtime import FastSlowRuntime

log = logging.getLogger(__name__)

#: Fresh samples a proposal is verified on: image subtasks, text subtasks (FaSTA*'s 25 and 20).
IMAGE_SAMPLES = 25
TEXT_SAMPLES = 20
#: Refinements of a rejected proposal (with the samples where it did worse as feedback).
MAX_REFINEMENTS = 2
#: Proposals verified per induction round (best supported first).
MAX_CANDIDATES = 8
#: Traces considered by one induction (the most recent).
WINDOW = 2000


@dataclass(frozen=True)
class SampleResult:
    seconds: float
    quality: float
    ok: bool
    rule_id: str | None
    features: ContextFeatures


Runner = Callable[[Any, RuleTable], SampleResult]


def verify(
    candidate: Candidate,
    table: RuleTable,
    samples: Sequence[Any],
    run: Runner,
    cache: dict[tuple[str, str], SampleResult],
) -> tuple[bool, dict[str, Any], list[tuple[Any, SampleResult, SampleResult]]]:
    """Run `samples` under `table` and under `table` changed by `candidate`; accept iff B = ΔC% − ΔQ% < 0.

    `run(sample, table)` serves one sample; `cache` keeps results under the current table between proposals
    (keyed by sample key and table version). Samples whose chosen rule is the same under both tables are not run
    twice. Returns (accepted, evidence, [(sample, old, new)]).
    """
    new_table = table.without(candidate.rule.id) if candidate.action == "retire" else table.with_rule(candidate.rule)
    pairs = []
    for s in samples:
        key = (s.key, table.fingerprint())
        if key not in cache:
            cache[key] = run(s, table)
        old = cache[key]
        chosen_new = new_table.choose(old.features, getattr(run, "alpha", 1.0))
        same = (chosen_new.id if chosen_new else None) == old.rule_id
        new = old if same else run(s, new_table)
        pairs.append((s, old, new))
    c_old = sum(o.seconds for _, o, _ in pairs)
    c_new = sum(n.seconds for _, _, n in pairs)
    q_old = sum(o.quality for _, o, _ in pairs) / max(1, len(pairs))
    q_new = sum(n.quality for _, _, n in pairs) / max(1, len(pairs))
    d_c = 100.0 * (c_new - c_old) / c_old if c_old > 0 else 0.0
    d_q = 100.0 * (q_new - q_old) / q_old if q_old > 0 else (100.0 if q_new > 0 else 0.0)
    b = d_c - d_q
    changed = sum(1 for _, o, n in pairs if o is not n)
    evidence = {
        "samples": len(pairs),
        "changed": changed,
        "seconds_old": round(c_old, 4),
        "seconds_new": round(c_new, 4),
        "quality_old": round(q_old, 4),
        "quality_new": round(q_new, 4),
        "dC%": round(d_c, 2),
        "dQ%": round(d_q, 2),
        "B": round(b, 2),
        "notes": candidate.notes,
    }
    return bool(pairs) and changed > 0 and b < 0, evidence, pairs


def _benefit(old: SampleResult, new: SampleResult) -> float:
    """B of one sample: ΔC% − ΔQ% (negative: the proposal helped there)."""
    d_c = 100.0 * (new.seconds - old.seconds) / old.seconds if old.seconds > 0 else 0.0
    d_q = 100.0 * (new.quality - old.quality) / old.quality if old.quality > 0 else (100.0 if new.quality else 0.0)
    return d_c - d_q


def refine(candidate: Candidate, pairs: Sequence[tuple[Any, SampleResult, SampleResult]]) -> Candidate | None:
    """Tighten a rejected "add"/"modify" proposal so it no longer fires where it did worse than the table."""
    if candidate.action == "retire":
        return None
    outcomes = [(n.ok and _benefit(o, n) < 0, n.features) for _, o, n in pairs if o is not n]
    found = best_condition(outcomes, min_support=2, min_rate=0.9)
    if found is None:
        return None
    cond = found[0]
    if any(c.feature == cond.feature and c.op == cond.op for c in candidate.rule.conditions):
        conds = tuple(c for c in candidate.rule.conditions if not (c.feature == cond.feature and c.op == cond.op))
        conds = (*conds, cond)
    else:
        conds = (*candidate.rule.conditions, cond)
    rule = replace(candidate.rule, conditions=conds, id=rule_id(candidate.rule.kind, candidate.rule.tools, conds))
    return replace(candidate, rule=rule, notes=candidate.notes + f"; refined with {cond.describe()}")


def is_text_kind(tables: Any, kind: str) -> bool:
    spec = tables.subtasks[kind]
    return bool(getattr(spec, "reads_text", False)) or "text" in kind or kind == "keyword_highlighting"


def induce_and_verify(tasks: int, runtime: FastSlowRuntime, alpha: float = 1.0, seed: int = 0) -> InductionDone:
    """One induction round on the runtime's store: propose, verify on fresh samples, record, apply accepted ones."""
    assert runtime.log is not None
    traces = runtime.log.traces(last=WINDOW)
    table = runtime.table()
    candidates = induce(traces, table)
    llm = getattr(runtime.services, "llm_client", None)
    if llm is None:
        from costa.llm_client import LlmClient, LlmConfig

        config = LlmConfig.from_settings(runtime.services.settings)
        llm = LlmClient(config) if config is not None else None
    if llm is not None:
        more, _calls = induce_llm(llm, traces, table, runtime.services.tables)
        candidates += more
    # A proposal verification rejected is not re-verified until its support has doubled (the published trigger
    # re-fired on every run); the best-supported proposals go first, at most MAX_CANDIDATES per round.
    rejected: dict[str, int] = {}
    for p in runtime.log.proposals():
        if not p.accepted and p.refinement == 0:
            rejected[p.rule.key()] = max(rejected.get(p.rule.key(), 0), p.rule.support)
    candidates = [c for c in candidates if c.rule.key() not in rejected or c.rule.support >= 2 * rejected[c.rule.key()]]
    candidates.sort(key=lambda c: (-c.rule.support, c.rule.id))
    candidates = candidates[:MAX_CANDIDATES]
    sampler = runtime.sampler or default_sampler
    drawn: dict[str, list[Any]] = {}
    runner = SampleRunner(runtime, alpha)
    cache: dict[tuple[str, str], SampleResult] = {}
    accepted: list[tuple[str, Rule]] = []
    offset = getattr(runtime, "sample_offset", 0)
    for cand in candidates:
        n = TEXT_SAMPLES if is_text_kind(runtime.services.tables, cand.rule.kind) else IMAGE_SAMPLES
        if cand.rule.kind not in drawn:  # fresh samples per round, shared by that round's proposals of a kind
            drawn[cand.rule.kind] = sampler(cand.rule.kind, n, seed, offset + tasks * 40)
        samples = drawn[cand.rule.kind]
        current = cand
        for refinement in range(MAX_REFINEMENTS + 1):
            ok, evidence, pairs = verify(current, table, samples, runner, cache)
            runtime.log.record_proposal(current.inducer, current.action, current.rule, refinement, ok, evidence)
            if ok:
                rule = replace(
                    current.rule, evidence={**evidence, "refinement": refinement, "inducer": current.inducer}
                )
                accepted.append((current.action, rule))
                table = table.without(rule.id) if current.action == "retire" else table.with_rule(rule)
                break
            nxt = refine(current, pairs) if refinement < MAX_REFINEMENTS else None
            if nxt is None:
                break
            current = nxt
    version = runtime.log.append_rules(accepted) if accepted else runtime.log.table_version()
    return InductionDone(tasks, len(candidates), tuple(r.id for _, r in accepted), version)


class SampleRunner:
    """`(sample, table) → SampleResult`: serve the sample's subtask fast–slow under `table` (traces not recorded)."""

    def __init__(self, runtime: FastSlowRuntime, alpha: float, threshold: float | None = None) -> None:
        self.runtime = runtime
        self.alpha = alpha
        self.threshold = runtime.services.settings.threshold if threshold is None else threshold

    def __call__(self, sample: Any, table: RuleTable) -> SampleResult:
        region = UserRegion(boxes=(sample.box,)) if sample.box is not None else UserRegion()
        ctx = self.runtime.context(Plan(subtasks=(sample.subtask,)), region, self.alpha, self.threshold)
        features = compute_features(sample.image, sample.subtask, region.boxes)
        start = TurnState(EditState(sample.image))
        run: SubtaskRun = drain(serve_subtask(self.runtime, ctx, sample.subtask, start, features, table, record=False))
        return SampleResult(
            run.seconds + run.search_seconds, run.quality if run.ok else 0.0, run.ok, run.tried, features
        )


def default_sampler(kind: str, n: int, seed: int, start: int) -> list[Any]:
    """Fresh samples from the synthetic "verify" stream (`costa.synthetic.fasta_tasks.samples`)."""
    from costa.synthetic.fasta_tasks import samples

    return samples(kind, n, seed, start)
