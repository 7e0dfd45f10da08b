"""The lazy A* engine behind `costa.search.iter_search`: one run over one graph — the queue, the measurements, the
retries and the completions that rank the queue. Pure: no I/O, no globals; the caller's states are opaque values.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Generator, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Generic, cast

import networkx as nx

from costa.errors import SearchError
from costa.events import (
    Event,
    NodePopped,
    NodeQueued,
    PathChosen,
    Retry,
    SearchFailed,
    ToolFailed,
    ToolFinished,
    ToolStarted,
)
from costa.fronts import FRONT_CAP, completions, update_completions
from costa.search.records import N, Observation, Outcome, S, SearchPolicy, SearchResult, score, unchecked_score


@dataclass(eq=False)
class _Node(Generic[N, S]):
    node: N  # also `start` / `goal` (cast): those are never estimated, executed or keyed
    parent: _Node[N, S] | None
    cost: float  # seconds so far, retries included
    quality: float  # product of step qualities so far
    state: S | None  # None until executed
    executed: bool
    step_seconds: float = 0.0
    step_quality: float = 1.0
    path: tuple[N, ...] = field(default=())
    tools: tuple[str, ...] = field(default=())  # event labels along `path`, kept incrementally
    stamp: int = 0  # bumped when the entry is re-queued at a new rank; older heap tuples for it are stale


#: Largest graph (edges) whose completions follow every measurement; larger graphs keep the first estimates (a dropped
#: step still leaves the completions of every larger graph at once: its ancestors are updated).
REFRESH_EDGES = 4_000


class AStar(Generic[N, S]):
    """One run of the search over one graph (see `iter_search`): the queue, the measurements, the completions."""

    def __init__(
        self,
        graph: nx.DiGraph,
        ends: tuple[Hashable, Hashable],
        estimate: Callable[[N], tuple[float, float]],
        execute: Callable[[N, S, int], Outcome[S]],
        policy: SearchPolicy,
        initial_state: S | None,
    ) -> None:
        start, goal = ends
        if start not in graph or goal not in graph:
            raise SearchError(f"start {start!r} and goal {goal!r} must be graph nodes")
        try:
            self.order = list(nx.topological_sort(graph))
        except nx.NetworkXUnfeasible as e:
            raise SearchError("the tool graph must be acyclic") from e
        self.graph, self.start, self.goal = graph, start, goal
        self.estimate, self.execute, self.p, self.initial_state = estimate, execute, policy, initial_state
        self.labels: dict[Hashable, tuple[str, str]] = {}
        self.by_key: dict[Hashable, list[N]] = {}
        for m in self.order:
            if m != start and m != goal:
                self.by_key.setdefault(policy.key(m), []).append(m)
        self.measured: dict[Hashable, tuple[float, float]] = {}
        self.failed: set[Hashable] = set()  # keys
        self.dropped: set[N] = set()  # nodes whose key failed
        # Small graphs (all real plans) get exact Pareto completions, refreshed after every measurement; large ones
        # the cheaper ideal-point bound computed once, so overhead stays low on 500-tool tables.
        self.refresh = graph.number_of_edges() <= REFRESH_EDGES
        self.cap = FRONT_CAP if self.refresh else 1
        self.fronts = completions(self.order, graph, goal, self.est, self.dropped, self.cap)
        self.position = {m: i for i, m in enumerate(self.order)}
        self.reshaped = False  # completions changed since the queue was last re-ranked
        self.version = 0
        self.counter = itertools.count()
        self.heap: list[tuple[float, int, int, int, _Node[N, S]]] = []  # (f, -depth, insertion, stamp, entry)
        self.waiting: dict[Hashable, list[_Node[N, S]]] = {}  # key → queued unexecuted entries
        self.changed: set[Hashable] = set()  # keys measured since the queue was last re-ranked
        self.observations: list[Observation[N]] = []
        self.executions = 0
        self.spent = 0.0
        self.halted: list[str] = []  # why the user stopped the run, once an execute reported it

    def label_of(self, m: Hashable) -> tuple[str, str]:
        found = self.labels.get(m)
        if found is None:
            found = self.labels[m] = self.p.label(m)
        return found

    def est(self, n: N) -> tuple[float, float]:
        return self.measured.get(self.p.key(n)) or self.estimate(n)

    def priority(self, n: _Node[N, S]) -> float:
        front = self.fronts.get(n.node)
        if front is None:
            return math.inf
        c0, q0, alpha = n.cost, n.quality, self.p.alpha
        if not n.executed:
            ec, eq = self.est(n.node)
            c0, q0 = c0 + ec, q0 * eq
        if len(front) == 1:
            c, q = front[0]
            return unchecked_score(c0 + c, q0 * q, alpha)
        return min(unchecked_score(c0 + c, q0 * q, alpha) for c, q in front)

    def push(self, n: _Node[N, S]) -> Event | None:
        if n.node not in self.fronts:  # nothing left after it reaches the goal (its continuations failed)
            return None
        f = self.priority(n)
        heapq.heappush(self.heap, (f, -len(n.path), next(self.counter), n.stamp, n))
        if not n.executed:
            self.waiting.setdefault(self.p.key(n.node), []).append(n)
        sid, tool = self.label_of(n.node)
        return NodeQueued(sid, tool, n.tools, f, n.executed)

    def run(self, n: _Node[N, S]) -> Iterator[Event]:
        """Execute n's step with its retry schedule; on success mark n executed, else drop its key."""
        sid, tool = self.label_of(n.node)
        key = self.p.key(n.node)
        total = 0.0
        attempts = max(1, self.p.max_attempts(n.node))
        for attempt in range(attempts):
            yield ToolStarted(sid, tool, attempt, self.p.params_of(n.node, attempt))
            # A parent is executed, so its state is its step's; the initial state is None only when omitted, where
            # the caller's S admits None.
            parent_state = cast(S, n.parent.state if n.parent else self.initial_state)
            if self.p.dry_run:
                out: Outcome[S] = Outcome(*self.est(n.node), state=parent_state)
            else:
                out = self.execute(n.node, parent_state, attempt)
            self.executions += 0 if out.cached else 1
            self.spent += out.seconds
            total += out.seconds
            if out.stopped:
                self.halted.append(out.error or "stopped")
                yield ToolFinished(
                    sid, tool, attempt, out.seconds, 0.0, False, (out.error or "stopped",), True, runner=out.runner
                )
                return
            quality = 0.0 if out.error else out.quality
            ok = out.error is None and quality >= self.p.threshold
            self.observations.append(Observation(n.node, out.seconds, quality, ok, attempt, out.cached))
            reasons = out.reasons if out.error is None else (out.error, *out.reasons)
            yield ToolFinished(
                sid, tool, attempt, out.seconds, quality, ok, reasons, cached=out.cached, runner=out.runner
            )
            if ok:
                base_c = n.parent.cost if n.parent else 0.0
                base_q = n.parent.quality if n.parent else 1.0
                n.cost, n.quality = base_c + total, base_q * quality
                n.step_seconds, n.step_quality = total, quality
                n.state, n.executed = out.state, True
                self.measured[key] = (total, quality)
                self.changed.add(key)
                self.update(self.by_key.get(key, ()) if self.refresh else ())
                break
            why = out.error or f"quality {quality:.2f} below threshold {self.p.threshold:.2f}"
            if attempt + 1 < attempts and not (out.final and out.error):
                yield Retry(sid, tool, attempt + 1, why)
            else:
                self.failed.add(key)
                gone = self.by_key.get(key, ())
                self.dropped.update(gone)
                self.update(gone)
                yield ToolFailed(sid, tool, f"{why} after {attempt + 1} attempt(s)")
                break
        self.version += 1

    def update(self, changed: Iterable[N]) -> None:
        """The completions after `changed` nodes were measured or dropped (their ancestors', nearest the goal first).

        A drop reaches every graph's completions, large ones too: otherwise the steps before a subtask that no tool
        can do still look completable, and the search tries every combination of them before it gives up.
        """
        if changed:
            rule = (self.est, self.dropped, self.cap)
            update_completions(self.fronts, self.position, self.graph, self.goal, changed, rule)
            self.reshaped = True

    def rerank(self) -> None:
        """Estimates changed: re-rank the entries they touch, whichever way they moved."""
        if self.reshaped:  # completions changed, so any entry may have moved: rank them all again
            live = (e for e in self.heap if e[3] == e[-1].stamp and e[-1].node in self.fronts)
            self.heap = [(self.priority(e[-1]), e[1], e[2], e[3], e[-1]) for e in live]
            heapq.heapify(self.heap)
        else:  # completions are fixed; only entries whose own step was measured (by key) changed
            for k in self.changed:
                for m in self.waiting.pop(k, ()):
                    if not m.executed and m.node in self.fronts:
                        m.stamp += 1
                        heapq.heappush(self.heap, (self.priority(m), -len(m.path), next(self.counter), m.stamp, m))
        self.changed.clear()
        self.reshaped = False

    def found(self, n: _Node[N, S]) -> SearchResult[N, S]:
        chain: list[_Node[N, S]] = []
        cur: _Node[N, S] | None = n.parent
        while cur is not None and cur.node != self.start:
            chain.append(cur)
            cur = cur.parent
        chain.reverse()
        return SearchResult(
            path=tuple(c.node for c in chain),
            seconds=n.cost,
            quality=n.quality,
            score=score(n.cost, n.quality, self.p.alpha),
            state=n.state,
            executions=self.executions,
            spent_seconds=self.spent,
            observations=tuple(self.observations),
            step_quality=tuple(c.step_quality for c in chain),
            step_seconds=tuple(c.step_seconds for c in chain),
        )

    def expand(self, n: _Node[N, S]) -> Iterator[Event]:
        """Queue n's successors (eager expansion runs each at once)."""
        goal_node = cast(N, self.goal)
        for succ in self.graph.successors(n.node):
            if succ in self.dropped:
                continue
            path = (*n.path, succ)
            if succ == self.goal:
                ev = self.push(_Node(goal_node, n, n.cost, n.quality, n.state, True, path=path, tools=n.tools))
                if ev is not None:
                    yield ev
                continue
            tools = (*n.tools, self.label_of(succ)[1])
            child: _Node[N, S] = _Node(succ, n, n.cost, n.quality, None, False, path=path, tools=tools)
            if not self.p.lazy:
                yield from self.run(child)
                if self.halted:
                    return
                if not child.executed:
                    continue
            if (ev := self.push(child)) is not None:
                yield ev

    def search(self) -> Generator[Event, None, SearchResult[N, S]]:
        root: _Node[N, S] = _Node(cast(N, self.start), None, 0.0, 1.0, self.initial_state, executed=True)
        if (first := self.push(root)) is not None:
            yield first
        ranked_at = self.version
        while self.heap and not self.halted:
            if ranked_at != self.version:
                self.rerank()
                ranked_at = self.version
                if not self.heap:
                    break
            f, _, _, stamp, n = heapq.heappop(self.heap)
            if stamp != n.stamp or n.node not in self.fronts:
                continue
            if n.node != self.start and n.node != self.goal and self.p.key(n.node) in self.failed:
                continue
            sid, tool = self.label_of(n.node)
            if n.node != self.start:
                yield NodePopped(sid, tool, n.tools, f, n.executed)
            if not n.executed:
                yield from self.run(n)
                if not self.halted and n.executed and (ev := self.push(n)) is not None:
                    yield ev
                continue
            if n.node == self.goal:
                result = self.found(n)
                labels = tuple(self.label_of(p) for p in result.path)
                yield PathChosen(labels, n.cost, n.quality, result.score, self.executions, self.spent)
                return result
            yield from self.expand(n)
        if self.halted:
            reason = f"stopped by the user ({self.halted[0]})"
        elif self.executions:
            reason = "every tool path failed its checks"
        else:
            reason = "no tool path reaches the goal"
        yield SearchFailed(reason, self.executions, self.spent, bool(self.halted))
        obs, halted = tuple(self.observations), bool(self.halted)
        return SearchResult(
            (), math.inf, 0.0, math.inf, None, self.executions, self.spent, obs, False, reason, stopped=halted
        )
