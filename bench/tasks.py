"""Task benchmark: seeded multi-step synthetic tasks planned, run and verified against ground truth.

The tasks live in `costa.synthetic.tasks` and their ground-truth verification in `costa.synthetic.truth`; this module
runs them (`run_task`: plan with the rule planner, run the turn, verify each subtask; the FaSTA* and reflection
benchmarks and the tests use it too) and formats the report (`python -m costa bench tasks --n N --seed S`).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from costa.synthetic.tasks import SyntheticTask, make_tasks
from costa.synthetic.truth import Frame, SubtaskVerdict, advance, match_plan, verify_subtask, words_after

# --------------------------------------------------------------------------------------------------------- runner


@dataclass(frozen=True)
class TaskResult:
    index: int
    instruction: str
    family: str
    verdicts: tuple[SubtaskVerdict, ...]
    seconds: float
    executions: int
    error: str = ""
    reported_done: bool = False  # the turn said every subtask was done (TurnDone.ok)
    retries: int = 0  # reflection retries the turn made
    turn_cpu_seconds: float = 0.0  # this process's CPU seconds in the turn itself (not planning or verification)

    @property
    def success(self) -> bool:
        return not self.error and all(v.passed for v in self.verdicts)


def run_task(services: Any, task: SyntheticTask, alpha: float | None = None) -> TaskResult:
    """Plan `task` with the rule planner, run it (with the object's box as the user's box), verify each subtask."""
    from costa.agent import run_turn
    from costa.errors import CostaError
    from costa.events import SubtaskDone, SubtaskProposed, ToolFailed, ToolFinished, TurnDone
    from costa.planner import plan_with_rules
    from costa.turn.records import TurnConfig, UserRegion

    t0 = time.perf_counter()
    try:
        plan = plan_with_rules(task.instruction, services.tables.subtasks)
    except CostaError as e:
        verdicts = tuple(SubtaskVerdict(x.kind, x.clause, False, "not planned") for x in task.expected)
        return TaskResult(task.index, task.instruction, task.family, verdicts, 0.0, 0, f"planning failed: {e}")
    region = UserRegion(boxes=(task.box,)) if task.box is not None else None
    # a proposal passed its checks too (the real-photo calibration could not vouch for it): judged like a done one
    done: dict[str, SubtaskDone | SubtaskProposed] = {}
    turn: TurnDone | None = None
    passed: set[str] = set()  # subtasks whose final step passed its check on some path
    failed: dict[str, str] = {}  # subtask id → the last failure of a final step
    retries = 0
    cpu0 = time.process_time()
    try:
        for ev in run_turn(services, task.image, plan, TurnConfig(alpha=alpha), region):
            if ev.kind == "reflection_retry":
                retries += 1
            if isinstance(ev, SubtaskDone | SubtaskProposed):
                done[ev.subtask_id] = ev
            elif isinstance(ev, TurnDone):
                turn = ev
            elif isinstance(ev, ToolFinished):
                goal = services.tables.subtasks[plan.by_id(ev.subtask_id).kind].produces
                if goal in services.tables.tools[ev.tool].outputs:
                    if ev.passed:
                        passed.add(ev.subtask_id)
                    else:
                        failed[ev.subtask_id] = f"{ev.tool} q={ev.quality:.2f}: {'; '.join(ev.reasons[:2])}"
            elif isinstance(ev, ToolFailed) and ev.subtask_id not in failed:
                failed[ev.subtask_id] = f"{ev.tool}: {ev.reason}"
    except CostaError as e:
        verdicts = tuple(SubtaskVerdict(x.kind, x.clause, False, "the turn failed") for x in task.expected)
        return TaskResult(task.index, task.instruction, task.family, verdicts, time.perf_counter() - t0, 0, str(e))
    turn_cpu = time.process_time() - cpu0
    matched = match_plan(plan, task.expected)
    by_index: dict[int, SubtaskVerdict] = {}
    frame = Frame()
    words = [w.text for w in task.text.words] if task.text is not None else []
    current = task.image
    edits = {s.id: services.tables.subtasks[s.kind].edits_image for s in plan.subtasks}
    for s in plan.subtasks:
        want = matched.get(s.id)
        sd = done.get(s.id)
        after = sd.image if sd is not None and edits[s.id] else None
        if want is not None:
            key = task.expected.index(want)
            if sd is None:
                skipped = turn.skipped.get(s.id) if turn is not None else None
                blockers = [b.kind for b in plan.subtasks if b.id not in passed and b.id in failed]
                if skipped:
                    why = f"no ready tool: {skipped}"
                elif s.id in failed and s.id not in passed:
                    why = f"no tool passed its check ({failed[s.id]})"
                elif s.id not in passed:
                    why = f"never run: the search gave up at {', '.join(blockers) or 'an earlier subtask'}"
                else:
                    why = f"its step passed, but the turn failed on {', '.join(blockers) or 'another subtask'}"
                by_index[key] = SubtaskVerdict(want.kind, want.clause, False, why[:240])
            else:
                ok, why = verify_subtask(task, want, current, after, sd.result, frame, words, services.reader)
                by_index[key] = SubtaskVerdict(want.kind, want.clause, ok, why)
            words = words_after(words, want)
        if after is not None:
            advance(frame, s.kind, current, after, want)
            current = after
    out = tuple(
        by_index.get(i, SubtaskVerdict(want.kind, want.clause, False, "the planner made no subtask for it"))
        for i, want in enumerate(task.expected)
    )
    executions = turn.executions if turn is not None else 0
    ok = bool(turn is not None and turn.ok)
    seconds = time.perf_counter() - t0
    return TaskResult(task.index, task.instruction, task.family, out, seconds, executions, "", ok, retries, turn_cpu)


# ------------------------------------------------------------------------------------------------------- report


def format_tasks_report(results: Sequence[TaskResult], seed: int, wall_seconds: float) -> str:
    """Per-subtask pass rates, per-task success, and the first failures."""
    by_kind: dict[str, list[bool]] = {}
    for r in results:
        for v in r.verdicts:
            by_kind.setdefault(v.kind, []).append(v.passed)
    n_sub = sum(len(v) for v in by_kind.values())
    n_pass = sum(sum(v) for v in by_kind.values())
    out = [
        f"{len(results)} synthetic tasks (seed {seed}), {n_sub} subtasks",
        "",
        f"{'subtask':24} {'n':>4} {'pass':>6}",
    ]
    for kind in sorted(by_kind):
        passed = by_kind[kind]
        out.append(f"{kind:24} {len(passed):>4} {sum(passed) / len(passed):6.2f}")
    out.append(f"{'all subtasks':24} {n_sub:>4} {n_pass / max(1, n_sub):6.2f}")
    out.append("")
    out.append(f"{'task':>4} {'family':8} {'steps':>5} {'ok':>3} {'seconds':>8} {'tools':>5}  instruction")
    for r in results:
        mark = "yes" if r.success else "no"
        out.append(
            f"{r.index:>4} {r.family:8} {len(r.verdicts):>5} {mark:>3} {r.seconds:8.2f} {r.executions:>5}  "
            f"{r.instruction[:90]}"
        )
    families: dict[str, list[bool]] = {}
    for r in results:
        families.setdefault(r.family, []).append(r.success)
    out.append("")
    share = sum(r.success for r in results) / max(1, len(results))
    per_family = ", ".join(f"{f} {sum(v)}/{len(v)}" for f, v in sorted(families.items()))
    out.append(
        f"tasks fully done and verified: {sum(r.success for r in results)}/{len(results)} = {share:.2f} ({per_family})"
    )
    seconds = [r.seconds for r in results]
    if seconds:
        out.append(f"seconds per task: median {statistics.median(seconds):.2f}, max {max(seconds):.2f}")
    failures = [(r, v) for r in results for v in r.verdicts if not v.passed]
    if failures:
        out.append("")
        out.append("failed subtasks:")
        for r, v in failures[:40]:
            extra = f" [{r.error}]" if r.error else ""
            out.append(f"  task {r.index} {v.kind}: {v.clause} → {v.reason[:150]}{extra}")
    out.append("")
    out.append(f"wall time {wall_seconds:.1f} s")
    return "\n".join(out)


def run_tasks_bench(n: int = 20, seed: int = 0, services: Any = None, alpha: float | None = None) -> str:
    """Generate `n` tasks from `seed`, run and verify each, and return the report.

    Raises:
        ValueError: `n` < 1.
    """
    from costa.services import Services

    t0 = time.perf_counter()
    services = services or Services()
    tasks = make_tasks(n, seed)
    results = [run_task(services, task, alpha) for task in tasks]
    return format_tasks_report(results, seed, time.perf_counter() - t0)


HELP = "synthetic multi-step tasks: rule plan, run, verify each subtask against ground truth"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare this benchmark's options."""
    p.add_argument("--n", type=int, default=20, help="tasks to generate and run")
    p.add_argument("--seed", type=int, default=0)


def run(args: argparse.Namespace) -> int:
    """Validate `--n`, run, print the report."""
    from costa.errors import InputError

    if args.n < 1:
        raise InputError(f"--n must be at least 1, got {args.n}")
    print(run_tasks_bench(n=args.n, seed=args.seed))
    return 0
