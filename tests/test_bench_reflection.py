"""`bench reflection` part 3: the verification benchmark's wrong results end to end. The search's first tool for the
subtask is a FAKE returning a prepared result (bench/reflection.py `_PreparedResult`); everything else is real."""

from __future__ import annotations

import dataclasses

import pytest

from bench.reflection import _first_final_tool, _PreparedResult, run_case
from costa.services import Services
from costa.synthetic.cases_checks import make_check_cases
from costa.types import Plan

pytestmark = pytest.mark.slow
NAMES = (
    "object_recoloration/correct/1",
    "object_recoloration/wrong object/0",
    "object_recoloration/second same-coloured object/0",
    "object_removal/wrong object/0",
    "global_adjustment/clipping/0",
)


@pytest.fixture(scope="module")
def services() -> tuple[Services, Services]:
    base = Services()
    return (
        Services(dataclasses.replace(base.settings, reflect=False), base.tables),
        Services(dataclasses.replace(base.settings, reflect=True), base.tables),
    )


@pytest.mark.parametrize("name", NAMES)
def test_a_wrong_first_result_is_never_reported_done_and_a_right_one_is(name: str, services) -> None:
    off, on = services
    kinds = frozenset({name.split("/")[0]})
    case = next(c for c in make_check_cases(0, 0.05, kinds=kinds) if c.name == name)
    first = _first_final_tool(off, case.before.image, Plan(subtasks=(case.subtask,)))
    assert first is not None
    for flag, s in ((False, off), (True, on)):
        run = run_case(s, case, first, flag)
        if case.correct:
            assert run.outcome == "done with it", run
        else:
            assert run.outcome != "done with it", run
    assert not isinstance(off.tool(first), _PreparedResult) and not isinstance(on.tool(first), _PreparedResult)
