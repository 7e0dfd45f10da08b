"""False-pass benchmark: how often the checks pass a wrong step result, and fail a right one.

`python -m costa bench checks [--seed 0] [--scale 1.0] [--kinds K,K] [--save DIR] [--per-case]`

Runs every case of `costa.synthetic.cases_checks` (by default 240 seeded wrong results in ten categories and 200 right
ones) through `costa.checks.check_step`, exactly as the search scores a step, with the real OCR reader, and prints per
check (subtask kind), per mistake category and overall:

- **false-pass rate**: wrong results whose quality reached the pass threshold (0.8) / wrong results;
- **false-fail rate**: right results below the threshold / right results.

Targets (issue 8): false-pass ≤ 2 %, false-fail ≤ 5 %. A check that raises counts as a fail and is listed.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from costa.synthetic.cases_checks import CheckCase

FALSE_PASS_TARGET = 0.02
FALSE_FAIL_TARGET = 0.05


@dataclass(frozen=True)
class CaseOutcome:
    """One case's verdict: its quality, whether it passed, the check's reasons, and the case's labels."""

    name: str
    kind: str
    category: str
    correct: bool
    quality: float
    passed: bool
    reasons: tuple[str, ...]
    seconds: float
    note: str = ""


@dataclass(frozen=True)
class Rate:
    """Counts of one group: wrong results that passed (of `wrong`), right results that failed (of `right`)."""

    wrong: int
    false_pass: int
    right: int
    false_fail: int

    @property
    def false_pass_rate(self) -> float:
        return self.false_pass / self.wrong if self.wrong else float("nan")

    @property
    def false_fail_rate(self) -> float:
        return self.false_fail / self.right if self.right else float("nan")

    @staticmethod
    def of(outcomes: Sequence[CaseOutcome]) -> Rate:
        wrong = [o for o in outcomes if not o.correct]
        right = [o for o in outcomes if o.correct]
        return Rate(len(wrong), sum(o.passed for o in wrong), len(right), sum(not o.passed for o in right))


def run_cases(cases: Sequence[CheckCase], threshold: float = 0.8, reader: object | None = None) -> list[CaseOutcome]:
    """Check every case (`costa.synthetic.cases_checks.CheckCase`) with `check_step`; return the outcomes.

    Args:
        threshold: quality a step must reach to pass (the search's, 0.8).
        reader: the OCR reader the text checks use (default: the services' RapidOCR reader).
    """
    from costa.checks import CheckContext, check_step
    from costa.errors import CostaError
    from costa.tables import load_tables

    tables = load_tables()
    if reader is None:
        from costa.services import Services

        reader = Services().reader
    ctx = CheckContext(reader=reader)  # type: ignore[arg-type]
    out = []
    for case in cases:
        c = case  # CheckCase
        t0 = time.perf_counter()
        try:
            v = check_step(ctx, tables.subtasks[c.kind], c.subtask, c.produced, c.before, c.after, c.output)
            quality, reasons = v.quality, v.reasons
        except CostaError as e:  # a check that cannot judge the result fails it
            quality, reasons = 0.0, (f"check raised {type(e).__name__}: {e}",)
        seconds = time.perf_counter() - t0
        out.append(
            CaseOutcome(
                c.name,
                c.kind,
                c.category,
                c.correct,
                quality,
                quality >= threshold,
                reasons,
                seconds,
                c.note,
            )
        )
    return out


def _pct(x: float) -> str:
    return "  n/a" if x != x else f"{100 * x:5.1f}%"


def format_report(outcomes: Sequence[CaseOutcome], seed: int, wall_seconds: float, per_case: bool = False) -> str:
    """Per check, per (check, category) and overall false-pass / false-fail rates, and the targets."""
    from costa.checks import subtask_checks

    checks = subtask_checks()
    kinds = list(dict.fromkeys(o.kind for o in outcomes))
    lines = [
        f"costa checks benchmark: seed {seed}, {len(outcomes)} step results "
        f"({sum(not o.correct for o in outcomes)} wrong, {sum(o.correct for o in outcomes)} right), "
        f"pass = quality >= 0.8, checks via costa.checks.check_step",
        "",
        f"{'check (subtask)':44}{'wrong':>6}{'false-pass':>12}{'right':>6}{'false-fail':>12}",
    ]
    for kind in kinds:
        group = [o for o in outcomes if o.kind == kind]
        r = Rate.of(group)
        name = f"{checks[kind].__name__} ({kind})" if kind in checks else kind
        lines.append(
            f"{name:44}{r.wrong:>6}{_pct(r.false_pass_rate):>7} ({r.false_pass:>2}){r.right:>6}"
            f"{_pct(r.false_fail_rate):>7} ({r.false_fail:>2})"
        )
        for category in dict.fromkeys(o.category for o in group if not o.correct):
            sub = Rate.of([o for o in group if o.category == category])
            lines.append(f"    {category:40}{sub.wrong:>6}{_pct(sub.false_pass_rate):>7} ({sub.false_pass:>2})")
    total = Rate.of(outcomes)
    lines += [
        "",
        "by mistake category (all checks):",
    ]
    for category in dict.fromkeys(o.category for o in outcomes if not o.correct):
        sub = Rate.of([o for o in outcomes if o.category == category])
        lines.append(f"    {category:40}{sub.wrong:>6}{_pct(sub.false_pass_rate):>7} ({sub.false_pass:>2})")
    lines += [
        "",
        f"overall: false-pass {_pct(total.false_pass_rate)} ({total.false_pass}/{total.wrong}), "
        f"false-fail {_pct(total.false_fail_rate)} ({total.false_fail}/{total.right})",
        f"   [{'met' if total.false_pass_rate <= FALSE_PASS_TARGET else 'MISSED'}] false-pass <= "
        f"{FALSE_PASS_TARGET:.0%}",
        f"   [{'met' if total.false_fail_rate <= FALSE_FAIL_TARGET else 'MISSED'}] false-fail <= "
        f"{FALSE_FAIL_TARGET:.0%}",
    ]
    secs = [o.seconds for o in outcomes]
    lines.append(
        f"check seconds per case: median {statistics.median(secs):.3f}, max {max(secs):.2f}; run {wall_seconds:.0f} s"
    )
    wrong_passes = [o for o in outcomes if o.passed != o.correct]
    if wrong_passes or per_case:
        lines += ["", "misjudged cases (quality, first reason):" if not per_case else "every case:"]
        for o in outcomes if per_case else wrong_passes:
            verdict = "PASS" if o.passed else "fail"
            lines.append(f"  {o.name:48} {verdict} {o.quality:.2f}  {o.note[:50]:50}  {(o.reasons or ('',))[0][:110]}")
    return "\n".join(lines)


def _save(cases: Sequence[object], outcomes: Sequence[CaseOutcome], folder: Path, per_group: int = 2) -> int:
    """Write before/after PNGs of the first `per_group` cases of each (kind, category) to `folder`."""
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    seen: dict[tuple[str, str], int] = {}
    written = 0
    for case, o in zip(cases, outcomes, strict=True):
        key = (o.kind, o.category)
        if seen.get(key, 0) >= per_group:
            continue
        seen[key] = seen.get(key, 0) + 1
        stem = o.name.replace("/", "_").replace(" ", "-")
        Image.fromarray(case.before.image).save(folder / f"{stem}_before.png")  # type: ignore[attr-defined]
        if case.output.image is not None:  # type: ignore[attr-defined]
            verdict = "pass" if o.passed else "fail"
            Image.fromarray(case.output.image).save(folder / f"{stem}_after_{verdict}_{o.quality:.2f}.png")  # type: ignore[attr-defined]
        written += 1
    return written


def run_checks_bench(
    seed: int = 0,
    scale: float = 1.0,
    kinds: Sequence[str] | None = None,
    save: Path | None = None,
    per_case: bool = False,
) -> str:
    """Build the cases, check them all, and return the report (see the module docstring)."""
    from costa.synthetic.cases_checks import make_check_cases

    t0 = time.perf_counter()
    cases = make_check_cases(seed=seed, scale=scale, kinds=frozenset(kinds) if kinds else None)
    outcomes = run_cases(cases)
    report = format_report(outcomes, seed, time.perf_counter() - t0, per_case)
    if save is not None:
        report += f"\nsaved {_save(cases, outcomes, save)} example cases to {save}"
    return report


HELP = "false-pass / false-fail rates of the checks on 240 seeded wrong and 200 right step results"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare this benchmark's options."""
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--scale", type=float, default=1.0, help="cases per group × this (default 1: 440 cases)")
    p.add_argument("--kinds", default="", help="comma-separated subtask kinds (default all)")
    p.add_argument("--save", type=Path, default=None, help="write example before/after PNGs here")
    p.add_argument("--per-case", action="store_true", help="list every case, not only misjudged ones")


def run(args: argparse.Namespace) -> int:
    """Run, print the report; 0 always (the report says which targets were met)."""
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    print(run_checks_bench(args.seed, args.scale, kinds or None, args.save, args.per_case))
    return 0
