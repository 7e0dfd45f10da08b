"""Planners: turn an instruction into a validated `Plan` of subtasks.

`plan_with_rules` is the offline rule planner (no LLM); `validate_plan` / `validate_subtasks` apply the ordering and
one-target rules any planner's output must meet; `load_subtask_kinds` reads the subtask ids from the tables.
"""

from costa.planner.kinds import load_subtask_kinds
from costa.planner.rules import MAX_INSTRUCTION_CHARS, NOTHING_RECOGNISED, plan_with_rules
from costa.planner.validate import split_targets, validate_plan, validate_subtasks

__all__ = [
    "MAX_INSTRUCTION_CHARS",
    "NOTHING_RECOGNISED",
    "load_subtask_kinds",
    "plan_with_rules",
    "split_targets",
    "validate_plan",
    "validate_subtasks",
]
