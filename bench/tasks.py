"""Task benchmark: seeded multi-step synthetic tasks planned, run and verified against ground truth.

The tasks, the runner and the ground-truth verification live in `costa.testing.tasks` (tests use them too); this module
only runs a stream of them and formats the report (`python -m costa bench tasks --n N --seed S`).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from typing import Any

from costa.testing.tasks import TaskResult, make_tasks, run_task

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
