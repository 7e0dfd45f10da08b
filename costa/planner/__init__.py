"""Planners: turn an instruction into a validated `Plan` of subtasks.

`plan_instruction` is the entry point the CLI, the app and the benchmarks use: the LLM planner when an endpoint is
configured (`llm.py`, prompts in `prompts.py`), the offline rule planner otherwise or as fallback (`rules.py`), with
every step an event. `validate_plan` / `validate_subtasks` apply the ordering and one-target rules any planner's
output must meet; `load_subtask_kinds` reads the subtask ids from the tables.
"""

from costa.planner.kinds import load_subtask_kinds
from costa.planner.planning import check_instruction, describe_planner, llm_client_for, plan_instruction
from costa.planner.rules import MAX_INSTRUCTION_CHARS, NOTHING_RECOGNISED, plan_with_rules
from costa.planner.validate import split_targets, validate_plan, validate_subtasks

__all__ = [
    "MAX_INSTRUCTION_CHARS",
    "NOTHING_RECOGNISED",
    "check_instruction",
    "describe_planner",
    "llm_client_for",
    "load_subtask_kinds",
    "plan_instruction",
    "plan_with_rules",
    "split_targets",
    "validate_plan",
    "validate_subtasks",
]
