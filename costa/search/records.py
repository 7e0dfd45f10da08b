"""The search's records and policy: the score, what `execute` reports (`Outcome`), what the search measured
(`Observation`) and found (`SearchResult`), and how one search runs (`SearchPolicy`). Pure, like the rest of
`costa.search`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

from costa.errors import SearchError

DEFAULT_THRESHOLD = 0.8

#: A tool-step node of the graph (every node but `start` and `goal`, which are sentinels the search never executes).
N = TypeVar("N", bound=Hashable)
#: The caller's execution state, opaque to the search: handed from one `Outcome` to the next step's `execute`.
S = TypeVar("S")


def score(cost: float, quality: float, alpha: float) -> float:
    """Return C^α · (2 − Q)^(2 − α); lower is better.

    Args:
        cost: seconds, ≥ 0.
        quality: in [0, 1].
        alpha: in [0, 2]; 0 optimises quality only, 2 cost only.

    >>> round(score(12.265, 0.89, 1.0), 4)
    13.6141
    """
    check_alpha(alpha)
    if cost < 0:
        raise SearchError(f"cost must be >= 0 seconds, got {cost}")
    if not 0.0 <= quality <= 1.0:
        raise SearchError(f"quality must be in [0, 1], got {quality}")
    return cost**alpha * (2.0 - quality) ** (2.0 - alpha)


def unchecked_score(cost: float, quality: float, alpha: float) -> float:
    """`score` without validation, for the search's inner loop (its inputs are validated once up front)."""
    return cost**alpha * (2.0 - quality) ** (2.0 - alpha)


def check_alpha(alpha: float) -> None:
    if not isinstance(alpha, int | float) or math.isnan(alpha) or not 0.0 <= alpha <= 2.0:
        raise SearchError(f"alpha must be a number in [0, 2], got {alpha!r}")


@dataclass(frozen=True)
class Outcome(Generic[S]):
    """What `execute` reports for one attempt: measured seconds, checked quality, the new state, and why.

    `error` set means the tool raised (a recorded failure, not a crash); quality and state are then ignored. `state`
    is None only on such failures, or where the caller's states admit None (a passing step's state is handed on as is).
    `stopped` (with `error` saying how) means the user stopped the run: the search ends at once, the attempt is
    reported as stopped, not failed, and it is no observation (a stopped call says nothing about the tool). `cached`
    means the caller replayed an earlier identical run: it is not counted as an execution. `final` (with `error`)
    means no other attempt of this step can pass (a refusal that does not depend on parameters): the search drops
    the step at once instead of running its remaining attempts. `runner` names what ran the call ("in_process",
    "ray"; "" when the caller does not say), for the `tool_finished` event.
    """

    seconds: float
    quality: float
    state: S | None = None
    reasons: tuple[str, ...] = ()
    error: str | None = None
    stopped: bool = False
    cached: bool = False  # replayed from the turn's memo of tool runs: not run again, nothing new learned
    final: bool = False  # the step's other attempts would fail the same way: no retry
    runner: str = ""


@dataclass(frozen=True)
class Observation(Generic[N]):
    """One measured attempt, for updating estimates in later searches (`cached`: a replay, nothing to learn)."""

    node: N
    seconds: float
    quality: float
    passed: bool
    attempt: int = 0
    cached: bool = False


@dataclass(frozen=True)
class SearchResult(Generic[N, S]):
    """The chosen path (nodes in order), its seconds and quality, and what the search paid for it.

    `state` is the last step's state when `found` (None when nothing was found).
    """

    path: tuple[N, ...]
    seconds: float
    quality: float
    score: float
    state: S | None
    executions: int
    spent_seconds: float
    observations: tuple[Observation[N], ...]
    found: bool = True
    reason: str = ""
    step_quality: tuple[float, ...] = ()
    step_seconds: tuple[float, ...] = ()
    stopped: bool = False  # the user's Stop ended the search (then nothing was found)


def _one_attempt(node: Any) -> int:
    return 1


def _plain_label(node: Hashable) -> tuple[str, str]:
    return ("", str(node))


def node_itself(node: Any) -> Hashable:
    """The default step identity: each node is a step of its own."""
    return cast(Hashable, node)


def _no_params(node: Any, attempt: int) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class SearchPolicy:
    """How one search runs: α, the threshold, retries, expansion, and how steps are named and identified.

    alpha: cost/quality trade-off in [0, 2]. threshold: a step passes when its quality ≥ threshold (0.8 in the
    papers). max_attempts: node → how many attempts its retry schedule allows (≥ 1). lazy: False runs every successor
    as soon as its parent is expanded (the published code's eager expansion, the benchmark baseline). label: node →
    (subtask id, tool id) for events; also called on the start and goal. key: node → identity shared by nodes that are
    "the same step" (e.g. the same tool chain on the same subtask after a different earlier path): a measurement of
    one becomes the estimate of the others, and a step that failed is dropped for all of them. params_of: (node,
    attempt) → the parameters that attempt runs with, reported in `ToolStarted` (the caller's `execute` applies them).
    dry_run: the α preview — `execute` is not called and every step "measures" its estimate, under the same threshold
    and queue rules (a step estimated below the threshold is tried in its turn and fails, as it would).
    """

    alpha: float
    threshold: float = DEFAULT_THRESHOLD
    max_attempts: Callable[[Any], int] = _one_attempt
    lazy: bool = True
    label: Callable[[Hashable], tuple[str, str]] = _plain_label
    key: Callable[[Any], Hashable] = node_itself
    params_of: Callable[[Any, int], dict[str, Any]] = _no_params
    dry_run: bool = False

    def __post_init__(self) -> None:
        check_alpha(self.alpha)
        if not 0.0 <= self.threshold <= 1.0:
            raise SearchError(f"threshold must be in [0, 1], got {self.threshold}")
