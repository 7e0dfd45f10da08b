"""Paraphrase suites: instructions with the plan a person expects, and the comparison that scores a planner on them.

A suite is a YAML file (tests/data/planner_suite_*.yaml) with a `cases:` list. Each case is

    - say: "recolour the car to red and the bus to blue"
      plan:                                   # subtasks in execution order
        - [object_recoloration, car, red]     # [kind, target, result] or [kind, target, result, {params}]
        - [object_recoloration, bus, blue]
      unsupported: 0                          # optional: how many parts the planner must report unsupported

or `refuse: true` for an instruction that must give no subtask and a message (gibberish, nothing editable, a question
to the user).

"Expected plan" means, precisely:

1. the same number of subtasks, with the same kinds, in the same (execution) order;
2. each target equal after normalisation (`normalise`): case-folded, hyphens as spaces, articles and possessives
   dropped, each word crudely singular ("the Red Cars" = "red car"); `null` only matches no target;
3. each result equal after the same normalisation, except for text kinds whose result is written text, compared
   exactly (spaces at the ends aside); a list in the suite gives alternatives that are all acceptable ("wood" or
   "wooden");
4. each param named in the case present with an equal value (numbers within 1e-6, strings normalised, a list in the
   suite gives alternatives, except against a list in the plan, which it must equal item by item: `keep: [bike,
   lamp post]`); params the case does not name are not compared (they are the planner's own bookkeeping);
5. the number of unsupported parts equal to `unsupported` (default 0), so a plan that drops or refuses a clause fails;
6. parents are not compared (the validator derives them from kinds and targets).

>>> case = Case("remove the cat", (Expected("object_removal", "cat", None),))
>>> from costa.types import Plan, Subtask
>>> compare(case, Plan(subtasks=(Subtask(id="s1", kind="object_removal", target="the Cats"),)))
>>> compare(case, Plan(subtasks=()))
'expected 1 subtasks, got 0: –'
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from costa.errors import InputError, PlanningError
from costa.types import Plan

#: Kinds whose `result` is text to write, compared letter by letter.
LITERAL_RESULT_KINDS = frozenset({"text_replacement", "text_addition"})

_ARTICLES = frozenset({"the", "a", "an", "its", "his", "her", "their", "this", "that", "my", "your", "our"})


@dataclass(frozen=True)
class Expected:
    """One expected subtask: kind, target, acceptable results, params that must match."""

    kind: str
    target: str | None
    result: tuple[str | None, ...] | str | None
    params: Mapping[str, Any] = field(default_factory=dict)

    def results(self) -> tuple[str | None, ...]:
        return self.result if isinstance(self.result, tuple) else (self.result,)


@dataclass(frozen=True)
class Case:
    """One suite instruction and what must come of it."""

    say: str
    plan: tuple[Expected, ...] = ()
    refuse: bool = False
    unsupported: int = 0


def normalise(text: str | None) -> str:
    """Comparison form of a target or result: "the Red-Cars" → "red car"; None → ""."""
    if not text:
        return ""
    words = re.sub(r"[-_]", " ", text.casefold()).replace("'s ", " ").replace("’s ", " ").split()
    out = []
    for w in words:
        w = w.strip(".,;:!?")
        if not w or w in _ARTICLES:
            continue
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.append(w)
    return " ".join(out)


def load_suite(path: Path) -> list[Case]:
    """Read a suite file into cases.

    Raises:
        ValueError: the file is not a `cases:` list of well-formed cases (the message names the case).
    """
    import yaml

    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(doc, dict) or not isinstance(doc.get("cases"), list):
        raise ValueError(f"{path}: expected a mapping with a `cases:` list")
    cases = []
    for i, row in enumerate(doc["cases"]):
        if not isinstance(row, dict) or not isinstance(row.get("say"), str):
            raise ValueError(f"{path}: case {i} has no `say` string: {row!r}")
        plan = []
        for item in row.get("plan") or []:
            if not isinstance(item, list) or not 3 <= len(item) <= 4 or not isinstance(item[0], str):
                raise ValueError(f"{path}: case {i} ({row['say']!r}) has a bad plan entry {item!r}")
            result = tuple(item[2]) if isinstance(item[2], list) else item[2]
            params = item[3] if len(item) == 4 else {}
            plan.append(Expected(item[0], _str(item[1]), _strs(result), dict(params)))
        refuse = bool(row.get("refuse", False))
        if refuse == bool(plan):
            raise ValueError(f"{path}: case {i} ({row['say']!r}) needs exactly one of `plan` and `refuse: true`")
        cases.append(Case(row["say"], tuple(plan), refuse, int(row.get("unsupported", 0))))
    return cases


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


def _strs(value: Any) -> tuple[str | None, ...] | str | None:
    return tuple(_str(v) for v in value) if isinstance(value, tuple) else _str(value)


def compare(case: Case, plan: Plan | None, message: str | None = None) -> str | None:
    """Why `plan` is not the case's expected plan, or None when it is.

    Args:
        case: the suite case.
        plan: what the planner returned (None when it asked a question or refused the input).
        message: the question or refusal, when `plan` is None.
    """
    if case.refuse:
        if plan is None:
            return None if message else "refused without a message"
        if plan.subtasks:
            return f"expected a refusal, got {_show(plan)}"
        return None if plan.unsupported and plan.unsupported[0].reason else "refused without a reason"
    if plan is None:
        return f"expected a plan, got a question or refusal: {message}"
    got = plan.subtasks
    if len(got) != len(case.plan):
        return f"expected {len(case.plan)} subtasks, got {len(got)}: {_show(plan)}"
    for k, (want, have) in enumerate(zip(case.plan, got, strict=True), start=1):
        if want.kind != have.kind:
            return f"subtask {k}: expected kind {want.kind}, got {_show(plan)}"
        if normalise(want.target) != normalise(have.target):
            return f"subtask {k}: expected target {want.target!r}, got {_show(plan)}"
        if not any(_same_result(want.kind, r, have.result) for r in want.results()):
            return f"subtask {k}: expected result {want.result!r}, got {_show(plan)}"
        for key, value in want.params.items():
            if not _same_value(value, have.params.get(key)):
                return f"subtask {k}: expected param {key}={value!r}, got {dict(have.params)!r} in {_show(plan)}"
    if len(plan.unsupported) != case.unsupported:
        parts = "; ".join(f"{u.text!r}: {u.reason}" for u in plan.unsupported) or "none"
        return f"expected {case.unsupported} unsupported parts, got {len(plan.unsupported)} ({parts})"
    return None


def _same_result(kind: str, want: str | None, have: str | None) -> bool:
    if kind in LITERAL_RESULT_KINDS and want is not None and have is not None:
        return want.strip() == have.strip()
    return normalise(want) == normalise(have)


def _same_value(want: Any, have: Any) -> bool:
    if isinstance(want, list) and isinstance(have, list | tuple):  # a list value: the same items in order
        return len(want) == len(have) and all(_same_value(w, h) for w, h in zip(want, have, strict=True))
    if isinstance(want, list):  # alternatives, any of them will do
        return any(_same_value(w, have) for w in want)
    if isinstance(want, bool) or isinstance(have, bool):
        return want == have
    if isinstance(want, int | float):
        try:
            return abs(float(want) - float(have)) < 1e-6
        except (TypeError, ValueError):
            return False
    if isinstance(want, str):
        return isinstance(have, str) and normalise(want) == normalise(have)
    return bool(want == have)


def _show(plan: Plan) -> str:
    return "; ".join(s.describe() + (f" {dict(s.params)}" if s.params else "") for s in plan.subtasks) or "–"


@dataclass(frozen=True)
class SuiteResult:
    """A planner on one suite: per-case failures (None = exact plan) and planning seconds."""

    name: str
    failures: tuple[tuple[str, str | None], ...]
    seconds: tuple[float, ...]

    @property
    def exact(self) -> int:
        return sum(1 for _, why in self.failures if why is None)

    @property
    def share(self) -> float:
        return self.exact / len(self.failures) if self.failures else 0.0

    def summary(self) -> str:
        ms = sorted(s * 1000 for s in self.seconds)
        p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))] if ms else 0.0
        return (
            f"{self.name}: exact plan {self.exact}/{len(self.failures)} ({100 * self.share:.1f} %), planning "
            f"median {statistics.median(ms) if ms else 0.0:.2f} ms, p95 {p95:.2f} ms"
        )


def run_suite(name: str, cases: Sequence[Case], planner: Callable[[str], Plan]) -> SuiteResult:
    """Plan every case with `planner` and compare; a `PlanningError`/`InputError` is a refusal with its message."""
    failures: list[tuple[str, str | None]] = []
    seconds: list[float] = []
    for case in cases:
        t0 = time.perf_counter()
        plan: Plan | None = None
        message: str | None = None
        try:
            plan = planner(case.say)
        except (PlanningError, InputError) as e:
            message = str(e)
        seconds.append(time.perf_counter() - t0)
        failures.append((case.say, compare(case, plan, message)))
    return SuiteResult(name, tuple(failures), tuple(seconds))
