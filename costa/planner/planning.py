"""The one way the CLI, the app and the benchmarks plan an instruction: `plan_instruction`.

It checks the instruction, then plans with the LLM when an endpoint is configured (OPENAI_BASE_URL, or OPENAI_API_KEY
with COSTA_LLM_MODEL) and with the offline rule planner otherwise or when the LLM fails. Everything that happens is an
event in the stream the caller forwards to the user:

- `LlmCall` per request to the endpoint (tokens, seconds, cost);
- `PlannerFallback` with the reason the LLM's plan was not used;
- `ClarificationNeeded` with a question when the instruction contradicts itself ("make the wall red and blue");
- `ErrorEvent` for an unusable instruction (empty, too long, not text) or a plan with no subtasks;
- `PlanReady` with the validated plan (also for a plan whose subtasks are all unsupported).

The generator's return value is the plan to run, or None when there is nothing to run; a plan that failed validation
is never returned.

>>> from pathlib import Path
>>> from costa.config import Settings
>>> from costa.events import drain
>>> events = []
>>> plan = drain(plan_instruction(Settings(home=Path(".")), "remove the cat"), events.append)
>>> [e.kind for e in events], [s.describe() for s in plan.subtasks]
(['plan_ready'], ["object_removal target='cat'"])
"""

from __future__ import annotations

import time
from collections.abc import Generator, Sequence
from typing import TYPE_CHECKING

from costa.config import Settings
from costa.errors import InputError, PlanningError
from costa.events import ClarificationNeeded, ErrorEvent, Event, PlannerFallback, PlanReady
from costa.llm_client import LlmClient, LlmConfig
from costa.planner.rules import MAX_INSTRUCTION_CHARS, plan_with_rules
from costa.planner.validate import plan_param_problems

if TYPE_CHECKING:
    import numpy as np

    from costa.tables import Tables
    from costa.types import Plan

#: What to tell a user who sent no instruction.
EMPTY_MESSAGE = "the instruction is empty: say what to change, e.g. \"replace the text 'SALE' with 'OPEN'\""


def llm_client_for(settings: Settings) -> LlmClient | None:
    """A client for the endpoint `settings` configure, or None (then the offline rule planner plans)."""
    config = LlmConfig.from_settings(settings)
    return LlmClient(config) if config is not None else None


def describe_planner(settings: Settings) -> str:
    """A status line: "LLM: offline rule planner" or "LLM: model X at URL"."""
    config = LlmConfig.from_settings(settings)
    return "LLM: offline rule planner" if config is None else f"LLM: {config.describe()}"


def check_instruction(instruction: object) -> str | None:
    """Why `instruction` cannot be planned (not text, empty, too long), or None when it can."""
    if not isinstance(instruction, str):
        return f"the instruction must be text, got {type(instruction).__name__}"
    text = instruction.strip()
    if not text:
        return EMPTY_MESSAGE
    if len(text) > MAX_INSTRUCTION_CHARS:
        return (
            f"the instruction is {len(text):,} characters; the planner reads at most {MAX_INSTRUCTION_CHARS:,}: "
            "split it into several turns"
        )
    return None


def plan_instruction(
    settings: Settings,
    instruction: str,
    image: np.ndarray | None = None,
    tables: Tables | None = None,
    *,
    ocr_text: Sequence[str] = (),
    history: Sequence[str] = (),
    client: LlmClient | None = None,
) -> Generator[Event, None, Plan | None]:
    """Plan `instruction`, yielding events; return the validated plan, or None when nothing can run.

    Args:
        settings: where the LLM endpoint is, if any.
        instruction: what the user typed.
        image: the RGB uint8 image the instruction is about; the LLM sees it downscaled (the rule planner ignores it).
        tables: the tool tables (default: tool_tables/); their subtask kinds are what a plan may use.
        ocr_text: text read from the image, given to the LLM as quoted data for text targets; never planned from.
        history: earlier instructions of this session, given to the LLM as quoted data ("it" across turns).
        client: a shared LLM client; default: one for `settings`, or none when no endpoint is configured.

    Returns:
        The plan (possibly with no subtasks, its `unsupported` saying why), or None after an `ErrorEvent` or a
        `ClarificationNeeded`.
    """
    t0 = time.perf_counter()
    problem = check_instruction(instruction)
    if problem is not None:
        yield ErrorEvent(problem)
        return None
    if tables is None:
        from costa.tables import load_tables

        tables = load_tables()
    text = instruction.strip()
    plan: Plan | None = None
    client = client if client is not None else llm_client_for(settings)
    if client is not None:
        from costa.planner.llm import plan_with_llm

        outcome = yield from plan_with_llm(client, text, tables.subtasks, image, ocr_text, history)
        if outcome.question:
            yield ClarificationNeeded(outcome.question)
            return None
        if outcome.plan is not None:
            plan = outcome.plan
        else:
            yield PlannerFallback(f"{outcome.failure}; planned with the offline rule planner instead")
    if plan is None:
        try:
            plan = plan_with_rules(text, frozenset(tables.subtasks))
        except PlanningError as e:
            yield ClarificationNeeded(str(e))
            return None
        except InputError as e:  # check_instruction covers these; kept so a new rule-planner limit is still a message
            yield ErrorEvent(str(e))
            return None
    problems = plan_param_problems(plan, tables)
    if problems:
        yield ErrorEvent("the plan's parameters cannot be used: " + "; ".join(problems))
        return None
    yield PlanReady(plan, time.perf_counter() - t0)
    if not plan.subtasks:
        reasons = "; ".join(f"{u.text!r}: {u.reason}" for u in plan.unsupported) or "no edit was recognised"
        yield ErrorEvent(f"no edit could be planned from this instruction: {reasons}")
    return plan
