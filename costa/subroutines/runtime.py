"""What fast–slow mode (FaSTA*) keeps between turns: the rule table, the observation log, its own learned
estimates, and when induction runs (`FastSlowRuntime`); the turn context its searches run in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from costa.checks import CheckContext
from costa.events import InductionDone
from costa.models.control import TurnControl
from costa.reflect.memo import MemoReader
from costa.subroutines.observations import ObservationLog, StoredEstimates
from costa.subroutines.rules import Rule, RuleTable, load_shipped_rules
from costa.turn.executor import StepExecutor
from costa.turn.records import UserRegion
from costa.turn.search import TurnContext
from costa.types import Plan

#: Induction runs once every K finished tasks (tasks, not subtasks).
INDUCE_EVERY = 20


@dataclass
class FastSlowRuntime:
    """What fast–slow mode keeps between turns: the rule table, the observation log, its own learned estimates (this
    machine kind's persisted runs; the process's `services.estimates` are not touched) and the induction policy.

    `induce` (tasks seen, runtime) → InductionDone runs induction + verification; None disables it (then
    `python -m costa mine` does it on demand). `executor_class` lets a benchmark replay tool runs.
    """

    services: Any
    log: ObservationLog | None = None
    shipped: tuple[Rule, ...] = ()
    k: int = INDUCE_EVERY
    induce: Callable[[int, FastSlowRuntime], InductionDone | None] | None = None
    executor_class: type[StepExecutor] = StepExecutor
    #: OCR engine the checks use (default the services' one; a benchmark may pass a memoising one).
    check_reader: Any = None
    #: `costa.vlm.VlmFeaturer` when an endpoint is configured: adds the paper's VLM context labels to the features.
    featurer: Any = None
    #: False: learn nothing from these turns (no traces, tool runs, estimates or task count) — for evaluation.
    record: bool = True
    #: The estimates fast–slow searches read and teach (default: the process's, for runtimes built by hand).
    estimates: Any = None
    #: (kind, n, seed, start) → samples that verification runs proposals on; None: the synthetic "verify" stream
    #: (`costa.subroutines.verification.default_sampler`).
    sampler: Callable[[str, int, int, int], list[Any]] | None = None
    _table: RuleTable | None = field(default=None, repr=False)
    _ready: Callable[[str], bool] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.estimates is None:
            self.estimates = self.services.estimates

    def is_ready(self) -> Callable[[str], bool]:
        """Which tools may run (asked once per runtime: readiness does not change within a process)."""
        if self._ready is None:
            self._ready = self.services.is_ready_fn()
        return self._ready

    @classmethod
    def from_services(cls, services: Any, store: Any = None, induce: bool = True) -> FastSlowRuntime:
        """A runtime on `store` (default: the store the settings name: COSTA_HOME, COSTA_DATABASE_URL), with its own
        persisted estimates."""
        from costa.store import Store

        store = store or Store.from_settings(services.settings)  # COSTA_DATABASE_URL when set, as every store
        log = ObservationLog(store, buffered=True)  # written once per turn
        estimates = StoredEstimates(services.tables, log=log, threshold=services.settings.threshold)
        runtime = cls(services, log, load_shipped_rules(services.tables), estimates=estimates)
        from costa.llm_client import LlmClient, LlmConfig

        config = LlmConfig.from_settings(services.settings)
        if config is not None:
            from costa.vlm import VlmFeaturer

            runtime.featurer = VlmFeaturer(LlmClient(config), services.tables.subtasks)
        if induce:
            from costa.subroutines.verification import induce_and_verify

            runtime.induce = induce_and_verify
        return runtime

    def context(
        self, plan: Plan, region: UserRegion, alpha: float, threshold: float, control: TurnControl | None = None
    ) -> TurnContext:
        """The turn context fast–slow searches run in: a step executor of `executor_class` (checks read through a
        per-turn OCR memo), this runtime's estimates and readiness."""
        reader = MemoReader(self.check_reader or self.services.reader)
        executor = self.executor_class(self.services, plan, region, CheckContext(reader=reader), control)
        return TurnContext(self.services, plan, region, executor, alpha, threshold, self.estimates, self.is_ready())

    def table(self) -> RuleTable:
        if self._table is None:
            self._table = self.log.rule_table(self.shipped) if self.log is not None else RuleTable(self.shipped)
        return self._table

    def refresh(self) -> None:
        self._table = None

    def task_done(self) -> InductionDone | None:
        """Count one finished task; run induction when K tasks have passed since the last one (once per K)."""
        if self.log is None or not self.record:
            return None
        self.log.flush()
        tasks = self.log.bump("tasks")
        last = self.log.counter("induced_at_tasks")
        if tasks - last < self.k or self.induce is None:
            return None
        self.log.set_counter("induced_at_tasks", tasks)
        done = self.induce(tasks, self)
        self.refresh()
        return done
