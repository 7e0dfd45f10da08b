"""Running verification samples: one subtask on one image under a given rule table, with real tools and checks."""

from __future__ import annotations

from typing import Any

from costa.agent import TurnState, UserRegion
from costa.checks import CheckContext
from costa.subroutines.executor import FastSlowRuntime, SubtaskRun, run_subtask
from costa.subroutines.features import compute_features
from costa.subroutines.mining import SampleResult
from costa.subroutines.rules import RuleTable
from costa.types import EditState, Plan


class SampleRunner:
    """`(sample, table) → SampleResult`: serve the sample's subtask fast–slow under `table` (traces not recorded)."""

    def __init__(self, runtime: FastSlowRuntime, alpha: float, threshold: float | None = None) -> None:
        self.runtime = runtime
        self.alpha = alpha
        self.threshold = runtime.services.settings.threshold if threshold is None else threshold

    def __call__(self, sample: Any, table: RuleTable) -> SampleResult:
        services = self.runtime.services
        region = UserRegion(boxes=(sample.box,)) if sample.box is not None else UserRegion()
        plan = Plan(subtasks=(sample.subtask,))
        executor = self.runtime.executor_class(
            services, plan, region, CheckContext(reader=self.runtime.check_reader or services.reader)
        )
        features = compute_features(sample.image, sample.subtask, region.boxes)
        gen = run_subtask(
            self.runtime,
            executor,
            sample.subtask,
            TurnState(EditState(sample.image)),
            region,
            features,
            self.alpha,
            self.threshold,
            table=table,
            record=False,
        )
        while True:
            try:
                next(gen)
            except StopIteration as stop:
                run: SubtaskRun = stop.value
                break
        return SampleResult(
            run.seconds + run.search_seconds, run.quality if run.ok else 0.0, run.ok, run.tried, features
        )


def default_sampler(kind: str, n: int, seed: int, start: int) -> list[Any]:
    """Fresh samples from the synthetic "verify" stream (`costa.synthetic.fasta_tasks.samples`)."""
    from costa.synthetic.fasta_tasks import samples

    return samples(kind, n, seed, start)
