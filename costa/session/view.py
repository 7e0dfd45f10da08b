"""A turn as every interface sees it (page, API report, CLI): `TurnView` folds the typed event stream into what to draw.

The same folding serves a live turn (events as they stream) and a reloaded one (events read back from the store), so
a page refresh shows exactly what the user saw. Tool-subgraph nodes are keyed per (subtask id, tool chain prefix):
orderings of a tree plan that run the same chain for a subtask share one drawn node, which keeps CoSTA*'s alternative
orderings readable.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from costa import events as E
from costa.graph import GOAL, START, StepNode, ToolGraph
from costa.types import Plan

NodeKey = tuple[str, tuple[str, ...]]  # (subtask id, tool chain prefix within that subtask)


# ---------------------------------------------------------------------------------------------------- layout


@dataclass
class GraphLayout:
    """The tool subgraph collapsed for drawing, with each node's table estimate (seconds, quality)."""

    nodes: list[NodeKey] = field(default_factory=list)
    edges: list[tuple[Any, Any]] = field(default_factory=list)  # NodeKey, or START / GOAL
    estimates: dict[NodeKey, tuple[float, float]] = field(default_factory=dict)

    @classmethod
    def from_tool_graph(cls, tg: ToolGraph, estimate: Any = None) -> GraphLayout:
        def key(n: object) -> Any:
            return (n.subtask_id, n.tools) if isinstance(n, StepNode) else n

        layout = cls()
        seen: set[Any] = set()
        for n in tg.graph.nodes:
            if isinstance(n, StepNode) and key(n) not in seen:
                seen.add(key(n))
                layout.nodes.append(key(n))
                if estimate is not None:
                    layout.estimates[key(n)] = estimate(n)
        edge_seen: set[tuple[Any, Any]] = set()
        for u, v in tg.graph.edges:
            e = (key(u), key(v))
            if e not in edge_seen:
                edge_seen.add(e)
                layout.edges.append(e)
        return layout

    def match(self, sid: str, tool: str, path: Sequence[str]) -> NodeKey:
        """The drawn node for an event's (subtask, tool, tool ids along the whole partial path)."""
        best: NodeKey | None = None
        for k in self.nodes:
            fits = k[0] == sid and k[1][-1] == tool and tuple(path[-len(k[1]) :]) == k[1]
            if fits and (best is None or len(k[1]) > len(best[1])):
                best = k
        return best or (sid, (tool,))


def path_keys(path: Iterable[tuple[str, str]]) -> list[NodeKey]:
    """Drawn nodes along a path given as (subtask id, tool) steps in execution order."""
    keys: list[NodeKey] = []
    for sid, tool in path:
        prev = keys[-1] if keys else None
        keys.append((sid, (*prev[1], tool)) if prev is not None and prev[0] == sid else (sid, (tool,)))
    return keys


# ------------------------------------------------------------------------------------------------------ view


@dataclass
class CallRow:
    """One tool attempt, as the ledger and the chat show it."""

    subtask_id: str
    tool: str
    attempt: int
    key: NodeKey
    seconds: float | None = None
    quality: float | None = None
    passed: bool | None = None
    reasons: tuple[str, ...] = ()
    dropped: str = ""
    stopped: bool = False  # the user's Stop ended it: neither passed nor failed


@dataclass(frozen=True)
class SubtaskPanel:
    """A panel shown under one subtask's message (a reflection, an unverified target, …), filled by turn hooks.

    `actions` are button labels the page offers under the panel (e.g. "Edit this region", "Let me point").
    """

    title: str
    body: str
    actions: tuple[str, ...] = ()


@dataclass
class TurnView:
    """Everything known about one turn so far, folded from its events."""

    instruction: str
    names: Mapping[str, str]
    threshold: float = 0.8
    turn_id: int | None = None
    turn_number: int | None = None  # the turn's number within its session (what the user sees)
    reads: frozenset[str] = frozenset()  # subtask kinds that read the image (their results are text, not pixels)
    unreferenced: frozenset[str] = frozenset()  # kinds whose answer is checked for form only (no offline reference)
    region_note: str = ""
    reading: str = ""  # how a reference in the instruction was read ("Read as “…” ('it' = …).")
    started: float = field(default_factory=time.perf_counter)
    plan: Plan | None = None
    planner_seconds: float = 0.0
    layout: GraphLayout | None = None
    unavailable: dict[str, str] = field(default_factory=dict)
    #: subtask id -> one plain sentence of what this build cannot do and what would enable it (`costa.messages`);
    #: the technical reason stays in `unavailable` (the page's "details" fold, `costa edit -v`)
    plain: dict[str, str] = field(default_factory=dict)
    needs_pointing: set[str] = field(default_factory=set)
    # subtask id -> why reflection asks the user to point (a ReflectionRetry "ask_user"); these are in needs_pointing
    # too, although the subtask may be done (its best attempt was kept)
    ask_pointing: dict[str, str] = field(default_factory=dict)
    calls: list[CallRow] = field(default_factory=list)
    node_state: dict[NodeKey, str] = field(default_factory=dict)
    retries: dict[NodeKey, int] = field(default_factory=dict)
    measured: dict[NodeKey, tuple[float, float]] = field(default_factory=dict)
    chosen: list[NodeKey] = field(default_factory=list)
    predicted: list[NodeKey] = field(default_factory=list)
    path: E.PathChosen | None = None
    done_subtasks: dict[str, E.SubtaskDone] = field(default_factory=dict)
    unverified: dict[str, E.TargetUnverified] = field(default_factory=dict)  # found but not verified: not done
    #: passed its checks, but costa cannot vouch for it on real-photo evidence: the user decides (not done unless
    #: accepted; then it is in done_subtasks too)
    proposed: dict[str, E.SubtaskProposed] = field(default_factory=dict)
    #: fast–slow mode: subtask id -> what served it ("rule <id> (v<table>)", or "local A*: <why>"), the last word
    served: dict[str, str] = field(default_factory=dict)
    #: a stopped turn: "stop" (Stop pressed) or "left" (the page that ran it was reloaded or closed)
    stopped_by: str = ""
    llm: list[E.LlmCall] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: The subtask whose reflection retry is running (its searches' failures are the retry's, not the turn's).
    retrying: str | None = None
    errors: list[str] = field(default_factory=list)
    question: str | None = None
    outcome: E.TurnDone | None = None
    panels: dict[str, list[SubtaskPanel]] = field(default_factory=dict)  # subtask id -> panels under its message
    status: str = "planning"  # planning, searching, done, partial, unverified, proposed, failed, stopped
    result_version: int | None = None
    proposal_id: int | None = None  # the session's pending proposal this turn made (status "proposed")
    result_number: int | None = None  # the result version's number within its session
    _popped: tuple[NodeKey, bool] | None = None

    # -- folding ---------------------------------------------------------------------------------------------

    def apply(self, ev: E.Event) -> None:
        """Fold one event into the view."""
        if isinstance(ev, E.PlanReady):
            self.plan = ev.plan
            self.planner_seconds = max(self.planner_seconds, ev.seconds)
        elif isinstance(ev, E.LlmCall):
            self.llm.append(ev)
        elif isinstance(ev, E.PlannerFallback):
            self.notes.append(f"The LLM plan was not used: {ev.reason}")
        elif isinstance(ev, E.ClarificationNeeded):
            self.question = ev.question
            self.status = "failed"
        elif isinstance(ev, E.SubgraphBuilt):
            self.status = "searching"
            self.unavailable.update(dict(ev.unavailable))
        elif isinstance(ev, E.NodeQueued | E.NodePopped):
            self._node_event(ev)
        elif isinstance(ev, E.ToolStarted):
            key = self._key_for_run(ev.subtask_id, ev.tool)
            self.node_state[key] = "running"
            self.calls.append(CallRow(ev.subtask_id, ev.tool, ev.attempt, key))
        elif isinstance(ev, E.ToolFinished):
            row = self._open_call(ev.subtask_id, ev.tool)
            row.seconds, row.quality, row.passed, row.reasons = ev.seconds, ev.quality, ev.passed, tuple(ev.reasons)
            row.stopped = ev.stopped
            if ev.stopped:  # not measured: drawn as it was before it ran
                self.node_state[row.key] = "queued"
            elif ev.passed:
                self.node_state[row.key] = "retried" if row.attempt > 0 else "executed"
                self.measured[row.key] = (ev.seconds, ev.quality)
        elif isinstance(ev, E.Retry):
            key = self._last_key(ev.subtask_id, ev.tool)
            self.retries[key] = self.retries.get(key, 0) + 1
            self.node_state[key] = "retried"
        elif isinstance(ev, E.ToolFailed):
            key = self._last_key(ev.subtask_id, ev.tool)
            self.node_state[key] = "failed"
            for row in reversed(self.calls):
                if row.key == key:
                    row.dropped = ev.reason
                    break
        elif isinstance(ev, E.PathChosen):
            self.path = ev
            self.chosen = path_keys(ev.path)
            self.predicted = []
        elif isinstance(ev, E.SearchFailed) and not ev.stopped:  # a stopped search is said by `stop()`
            if self.retrying is not None:  # a reflection retry's own search: the subtask already has an attempt
                note = f"🔎 {self.retrying}: the retry found no other tool path that passes its checks."
                if note not in self.notes:
                    self.notes.append(note)
            else:
                self.errors.append(f"No tool path passed its checks: {ev.reason}.")
        elif isinstance(ev, E.ReflectionRetry):
            self.retrying = ev.subtask_id
            if ev.action == "ask_user":
                self.needs_pointing.add(ev.subtask_id)
                self.ask_pointing[ev.subtask_id] = ev.reason
        elif isinstance(ev, E.ReflectionKept):
            self.retrying = None
        elif isinstance(ev, E.SubtaskDone):
            self.done_subtasks[ev.subtask_id] = ev
        elif isinstance(ev, E.TargetUnverified):
            self.unverified[ev.subtask_id] = ev
        elif isinstance(ev, E.SubtaskProposed):
            self.proposed[ev.subtask_id] = ev
        elif isinstance(ev, E.PointingNeeded):
            self.needs_pointing.update(ev.subtask_ids)
        elif isinstance(ev, E.RuleHit):
            self.notes.append(f"{ev.subtask_id}: fast — rule {ev.rule_id} (v{ev.version}): {' → '.join(ev.tools)}")
            self.served[ev.subtask_id] = f"rule {ev.rule_id} (v{ev.version})"
        elif isinstance(ev, E.Fallback):
            self.notes.append(f"{ev.subtask_id}: slow — local A* ({ev.reason})")
            self.served[ev.subtask_id] = f"local A*: {ev.reason}"
        elif isinstance(ev, E.ErrorEvent):
            if ev.message not in self.errors:
                self.errors.append(ev.message)
        elif isinstance(ev, E.TurnDone):
            self.outcome = ev
            self.unavailable.update(ev.skipped)
            if ev.unverified and not ev.ok:
                self.status = "unverified"  # a target was found but not verified: not done, nothing accepted
            elif ev.proposed and not ev.ok:
                self.status = "proposed"  # passed its checks, but costa cannot vouch for it: the user decides
            elif ev.image is None:
                self.status = "failed"
            else:
                self.status = "done" if ev.ok else "partial"

    def _node_event(self, ev: E.NodeQueued | E.NodePopped) -> None:
        if ev.tool in (START, GOAL) or not ev.subtask_id:
            return
        key = self.layout.match(ev.subtask_id, ev.tool, ev.path) if self.layout else (ev.subtask_id, (ev.tool,))
        if isinstance(ev, E.NodePopped):
            self._popped = (key, ev.executed)
        elif self.node_state.get(key, "idle") == "idle":
            self.node_state[key] = "queued"

    def _key_for_run(self, sid: str, tool: str) -> NodeKey:
        if self._popped is not None:
            key, executed = self._popped
            if key[0] == sid and key[1][-1] == tool and not executed:
                return key
            if key[0] == sid:  # eager expansion runs children of the popped node
                return (sid, (*key[1], tool))
        return (sid, (tool,))

    def _open_call(self, sid: str, tool: str) -> CallRow:
        for row in reversed(self.calls):
            if row.subtask_id == sid and row.tool == tool and row.passed is None:
                return row
        row = CallRow(sid, tool, 0, (sid, (tool,)))
        self.calls.append(row)
        return row

    def _last_key(self, sid: str, tool: str) -> NodeKey:
        for row in reversed(self.calls):
            if row.subtask_id == sid and row.tool == tool:
                return row.key
        return (sid, (tool,))

    def add_panel(self, subtask_id: str, panel: SubtaskPanel) -> None:
        """Show `panel` under subtask `subtask_id`'s message."""
        self.panels.setdefault(subtask_id, []).append(panel)

    def stop(self) -> None:
        self.status = "stopped"
        for k, s in self.node_state.items():
            if s == "running":
                self.node_state[k] = "queued"

    # -- numbers ---------------------------------------------------------------------------------------------

    def totals(self) -> dict[str, float]:
        """Turn totals for the ledger and the store."""
        done = [c for c in self.calls if c.seconds is not None]
        tool_seconds = sum(c.seconds or 0.0 for c in done)
        return {
            "seconds": self.outcome.seconds if self.outcome else time.perf_counter() - self.started,
            "tool_seconds": tool_seconds,
            "executions": len(done),
            "retries": sum(1 for c in self.calls if c.attempt > 0),
            "path_seconds": self.path.seconds if self.path else 0.0,
            "quality": self.outcome.quality if self.outcome else 0.0,
            "llm_calls": len(self.llm),
            "llm_tokens": sum(c.prompt_tokens + c.completion_tokens for c in self.llm),
            "llm_seconds": sum(c.seconds for c in self.llm),
            "llm_cost": sum(c.cost or 0.0 for c in self.llm),
        }

    def subtask_state(self, sid: str) -> str:
        if sid in self.unverified and sid not in self.done_subtasks:
            return "unverified"
        if sid in self.proposed and sid not in self.done_subtasks:
            return "proposed"
        if sid in self.done_subtasks:
            return "done"
        if sid in self.unavailable:
            return "skipped"
        if self.status == "stopped":
            return "stopped"
        if any(c.subtask_id == sid and c.passed is None and not c.dropped for c in self.calls):
            return "running" if self.status == "searching" else "pending"
        if self.status in ("failed", "partial", "done", "unverified", "proposed"):
            return "kept" if self._located_to_keep(sid) else "failed"
        return "pending"

    def _located_to_keep(self, sid: str) -> bool:
        """Whether `sid` locates what the instruction keeps unchanged ("… but keep the person unchanged") and found
        it: such a step edits nothing and ends no path of the edits, so it is neither done nor failed."""
        from costa.turn.kept import KEEP_ROLE

        if self.plan is None or sid not in {s.id for s in self.plan.subtasks}:
            return False
        keeps = self.plan.by_id(sid).params.get("role") == KEEP_ROLE
        return keeps and any(c.subtask_id == sid and c.passed for c in self.calls)


def is_tool_event(ev: E.Event | None) -> bool:
    """Events worth a screen update: tool calls and milestones (not every queue push); None is a redraw."""
    return ev is None or isinstance(
        ev,
        E.ToolStarted
        | E.ToolFinished
        | E.Retry
        | E.ToolFailed
        | E.PathChosen
        | E.SubtaskDone
        | E.SubtaskProposed
        | E.TurnDone
        | E.ErrorEvent
        | E.SubgraphBuilt
        | E.PlanReady
        | E.LlmCall
        | E.ClarificationNeeded
        | E.PlannerFallback
        | E.SearchFailed,
    )
