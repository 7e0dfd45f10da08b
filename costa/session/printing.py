"""The command line's printing of a turn: the plan, each event as a line, LLM calls and their costs, the cost ledger.

Shared by `costa edit` (`costa.session.console`) and `costa plan` (`costa.cli`); each function writes to the stream
it is given (errors to stderr).
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

#: One ledger row: (subtask id, tool, attempt, seconds, quality, passed, replayed by the turn's memo).
LedgerRow = tuple[str, str, int, float, float, bool, bool]


def describe_llm_call(ev: Any) -> str:
    """One LLM call as a line: purpose, model, tokens, seconds, cost (or why it failed)."""
    cost = f", cost {ev.cost:.6f}" if ev.cost is not None else ""
    if not ev.ok:
        return f"{ev.purpose}: {ev.model} failed after {ev.seconds:.2f} s: {ev.error}"
    return (
        f"{ev.purpose}: {ev.model}, {ev.prompt_tokens} prompt + {ev.completion_tokens} completion tokens, "
        f"{ev.seconds:.2f} s{cost}"
    )


def print_llm_costs(events: Any, out: TextIO) -> None:
    """The turn's LLM calls in one line: how many, failed, tokens, seconds, cost."""
    from costa.events import LlmCall

    calls = [e for e in events if isinstance(e, LlmCall)]
    if not calls:
        return
    tokens_in, tokens_out = sum(c.prompt_tokens for c in calls), sum(c.completion_tokens for c in calls)
    costs = [c.cost for c in calls if c.cost is not None]
    cost = f", cost {sum(costs):.6f}" if costs else ""
    print(
        f"  llm calls {len(calls)} ({sum(not c.ok for c in calls)} failed), tokens {tokens_in} prompt + {tokens_out} "
        f"completion, {sum(c.seconds for c in calls):.3f} s{cost}",
        file=out,
    )


def print_plan(plan: Any, out: TextIO) -> None:
    """The plan: each subtask in execution order with its target, result and parents; what is unsupported."""
    from costa.tables import load_tables

    names = {k: v.name for k, v in load_tables().subtasks.items()}
    print(f"plan ({plan.planner}, {plan.form}):", file=out)
    for s in plan.subtasks:
        extra = []
        if s.target:
            extra.append(f"target={s.target!r}")
        if s.result:
            extra.append(f"result={s.result!r}")
        if s.parents:
            extra.append(f"after {', '.join(s.parents)}")
        if s.params.get("role") == "keep":
            extra.append("(what to keep unchanged)")
        if s.params.get("keep"):
            extra.append(f"keeping {', '.join(str(k) for k in s.params['keep'])} unchanged")
        print(f"  {s.id}. {names.get(s.kind, s.kind)} {' '.join(extra)}", file=out)
    for u in plan.unsupported:
        print(f"  unsupported: {u.text!r} — {u.reason}", file=out)


def print_event(
    ev: Any,
    quiet: bool,
    ledger: list[LedgerRow],
    out: TextIO,
    unreferenced: frozenset[str] = frozenset(),
    plain: dict[str, str] | None = None,
    verbose: bool = False,
) -> None:
    """One event as CLI lines (`quiet`: only the summary lines); tool runs are also added to `ledger`. A subtask no
    tool can run is said in one plain sentence (`plain`), the technical reason only with `-v` (`verbose`)."""
    from costa import events as E

    if isinstance(ev, E.PlanReady):
        print_plan(ev.plan, out)
    elif isinstance(ev, E.LlmCall):
        print(f"llm   {describe_llm_call(ev)}", file=out)
    elif isinstance(ev, E.PlannerFallback):
        print(f"planner fallback: {ev.reason}", file=out)
    elif isinstance(ev, E.ToolFinished):
        ledger.append((ev.subtask_id, ev.tool, ev.attempt, ev.seconds, ev.quality, ev.passed, ev.cached))
        if not quiet:
            mark = "pass" if ev.passed else "FAIL"
            where = f" on {ev.runner}" if ev.runner not in ("", "in_process") else ""  # a Ray Serve replica ran it
            print(
                f"  run   {ev.subtask_id} {ev.tool} (attempt {ev.attempt}){where}: {ev.seconds:.3f} s, "
                f"quality {ev.quality:.2f} {mark} — {'; '.join(ev.reasons)}",
                file=out,
            )
    elif isinstance(ev, E.Retry) and not quiet:
        print(f"  retry {ev.subtask_id} {ev.tool} attempt {ev.attempt}: {ev.reason}", file=out)
    elif isinstance(ev, E.ToolFailed) and not quiet:
        print(f"  drop  {ev.subtask_id} {ev.tool}: {ev.reason}", file=out)
    elif isinstance(ev, E.SubgraphBuilt):
        print(f"tool subgraph: {ev.nodes} nodes, {ev.edges} edges over {', '.join(ev.tools)}", file=out)
        for sid, why in ev.unavailable:
            print(f"  cannot run {sid}: {plain.get(sid, why) if plain and not verbose else why}", file=out)
    elif isinstance(ev, E.PathChosen):
        print(f"chosen path: {' → '.join(f'{t} ({s})' for s, t in ev.path)}", file=out)
        print(f"  path {ev.seconds:.3f} s, quality {ev.quality:.3f}, score {ev.score:.4f}", file=out)
    elif isinstance(ev, E.SubtaskDone):
        unchecked = " (answer not verified: only its form was checked)" if ev.subtask_kind in unreferenced else ""
        print(
            f"done  {ev.subtask_id} {ev.subtask_kind} via {'+'.join(ev.tools)}: quality {ev.quality:.2f}{unchecked} — "
            f"{ev.result}",
            file=out,
        )
    elif isinstance(ev, E.SubtaskProposed):
        print(
            f"proposed {ev.subtask_id} {ev.subtask_kind} via {'+'.join(ev.tools)}: passed its checks (quality "
            f"{ev.quality:.2f}), but costa cannot vouch for it — {ev.reason}",
            file=out,
        )
    elif isinstance(ev, E.TargetUnverified):
        print(f"unverified {ev.subtask_id} {ev.target!r}: {ev.summary}", file=out)
    elif isinstance(ev, E.PointingNeeded):
        print(f"point first {', '.join(ev.subtask_ids)}: {ev.reason}", file=out)
    elif ev.kind in ("rule_hit", "fallback", "induction_done"):
        if not quiet:
            from costa.subroutines.commands import describe_event

            print(describe_event(ev), file=out)
    elif ev.kind in ("reflection", "reflection_retry", "reflection_kept", "expert_dropped"):
        if not quiet or ev.kind == "reflection_kept":
            from costa.reflect.report import describe_event as describe_reflection

            print(describe_reflection(ev), file=out)
    elif isinstance(ev, E.ErrorEvent):
        said = ev.message
        if plain and not verbose and said.startswith("no subtask can run here"):
            said = "no subtask can run here: " + " ".join(plain.values()) + " (-v for the details)"
        print(f"error: {said}", file=sys.stderr)


def print_ledger(ledger: list[LedgerRow], done: Any, out: TextIO) -> None:
    """Every tool run with its seconds, quality and check (a memo replay says "memo", at 0 s), then the totals."""
    print("cost ledger:", file=out)
    print(f"  {'subtask':8} {'tool':24} {'try':>3} {'seconds':>8} {'quality':>7}  check", file=out)
    for sid, tool, attempt, seconds, quality, passed, cached in ledger:
        check = ("pass" if passed else "fail") + (" (memo: ran already on this input)" if cached else "")
        print(f"  {sid:8} {tool:24} {attempt:>3} {seconds:8.3f} {quality:7.2f}  {check}", file=out)
    memo = sum(1 for r in ledger if r[6])
    print(
        f"  tool runs {done.executions} (memo replays {memo}), tool seconds {done.tool_seconds:.3f}, turn "
        f"{done.seconds:.3f} s (checks + search + I/O {done.seconds - done.tool_seconds:.3f} s)",
        file=out,
    )
