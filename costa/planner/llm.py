"""LLM planner: ask an OpenAI-compatible model for a plan, and trust nothing it returns until it validates.

Flow: the prompt (`prompts.py`, built from the subtask table) → one chat request in JSON mode → the answer is read
as JSON, checked field by field (`parse_plan_reply`) and passed through the same `validate_subtasks` as the rule
planner's drafts. An answer that fails any of that gets ONE re-ask quoting the error; a second failure, or an endpoint
that stays down after the client's retries, ends with a failure reason so the caller can fall back to the offline rule
planner and say why. Every request is yielded as an `LlmCall` event for the cost ledger.

>>> from costa.types import SubtaskSpec
>>> table = {"object_removal": SubtaskSpec("object_removal", "Object Removal", "image", True, "")}
>>> reply = '{"subtasks": [{"id": 1, "kind": "Object Removal", "target": "the cat"}]}'
>>> parsed = parse_plan_reply(reply, table, "remove the cat", "llm:test")
>>> [s.describe() for s in parsed.plan.subtasks]
["object_removal target='the cat'"]
"""

from __future__ import annotations

import re
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from costa.colours import parse_colour
from costa.errors import PlanningError
from costa.events import Event
from costa.llm_client import LlmClient, LlmError, image_data_url, parse_json_object
from costa.planner.prompts import build_plan_messages, build_reask_message
from costa.planner.rules import NOTHING_RECOGNISED
from costa.planner.validate import validate_subtasks
from costa.types import Plan, Subtask, SubtaskSpec, Unsupported

if TYPE_CHECKING:
    import numpy as np

_Scalar = str | int | float | bool | None


class _RawSubtask(BaseModel):
    """A subtask as a model writes it: ids may be numbers, parents a single id, unknown extra keys are ignored."""

    model_config = ConfigDict(extra="ignore")

    id: str | int
    kind: str
    target: _Scalar = None
    result: _Scalar = None
    params: dict[str, Any] | None = None
    parents: list[str | int] | str | int | None = None

    @field_validator("kind")
    @classmethod
    def _kind_not_blank(cls, kind: str) -> str:
        if not kind.strip():
            raise ValueError("kind is empty")
        return kind


class _RawUnsupported(BaseModel):
    model_config = ConfigDict(extra="ignore")

    text: str
    reason: str = "no subtask kind covers it"


class _RawPlan(BaseModel):
    model_config = ConfigDict(extra="ignore")

    form: Literal["chain", "tree"] = "chain"
    subtasks: list[_RawSubtask] = []
    unsupported: list[_RawUnsupported | str] = []
    question: str | None = None


@dataclass(frozen=True)
class ParsedReply:
    """A usable answer: a validated plan, or a question for the user (then `plan` is None)."""

    plan: Plan | None
    question: str | None = None


@dataclass(frozen=True)
class LlmPlanOutcome:
    """What the LLM planner ended with: a plan, a question for the user, or why it failed (then fall back)."""

    plan: Plan | None = None
    question: str | None = None
    failure: str | None = None


def _text(value: _Scalar) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    text = " ".join(str(value).split())
    return None if text.casefold() in ("", "null", "none") else text


def _kind_id(kind: str, table: Mapping[str, SubtaskSpec]) -> str:
    """Map what the model wrote ("object_recoloration", "Object Recoloration", "object-recoloration") to a table id.

    An unknown kind is returned as written; validation then reports it as unsupported.
    """
    if kind in table:
        return kind
    folded = kind.strip().casefold()
    for spec in table.values():
        if folded == spec.name.casefold():
            return spec.id
    snake = re.sub(r"[^a-z0-9]+", "_", folded).strip("_")
    return snake if snake in table else kind.strip()


def _describe(e: ValidationError) -> str:
    parts = []
    for err in e.errors()[:5]:
        where = ".".join(str(x) for x in err["loc"]) or "answer"
        parts.append(f"{where}: {err['msg']}")
    return "the JSON does not match the plan format: " + "; ".join(parts)


def parse_plan_reply(text: str, table: Mapping[str, SubtaskSpec], instruction: str, planner: str) -> ParsedReply:
    """Read and validate a model's answer.

    Args:
        text: the answer as the model wrote it (JSON, possibly fenced or wrapped in prose).
        table: the subtask kinds (id → spec).
        instruction: the instruction the plan is for (stored in the plan).
        planner: the plan's `planner` label, e.g. "llm:gpt-4o-mini".

    Returns:
        A validated plan, or the model's question when it asked one instead of planning.

    Raises:
        ValueError: the answer is not a JSON object in the plan format (pydantic's ValidationError included).
        PlanningError: the plan breaks a validation rule (duplicate ids, unknown parents, a cycle, a contradiction).
    """
    try:
        raw = _RawPlan.model_validate(parse_json_object(text))
    except ValidationError as e:
        raise ValueError(_describe(e)) from e
    question = _text(raw.question)
    if question:
        return ParsedReply(None, question)
    subtasks = []
    for r in raw.subtasks:
        parents = r.parents if isinstance(r.parents, list) else [] if r.parents is None else [r.parents]
        subtasks.append(
            Subtask(
                id=str(r.id),
                kind=_kind_id(r.kind, table),
                target=_text(r.target),
                result=_text(r.result),
                params=dict(r.params or {}),
                parents=tuple(str(p) for p in parents),
            )
        )
    subtasks = [_with_colour(s) for s in subtasks]
    validated, dropped = validate_subtasks(subtasks, frozenset(table))
    unsupported = [
        u if isinstance(u, _RawUnsupported) else _RawUnsupported(text=u, reason="no subtask kind covers it")
        for u in raw.unsupported
    ]
    reported = tuple(Unsupported(text=u.text, reason=u.reason) for u in unsupported) + dropped
    if not validated and not reported:
        reported = (Unsupported(text=instruction, reason=f"{NOTHING_RECOGNISED} by the LLM planner"),)
    plan = Plan(instruction=instruction, subtasks=validated, form=raw.form, unsupported=reported, planner=planner)
    return ParsedReply(plan)


def _with_colour(s: Subtask) -> Subtask:
    """A recolouring's result must be a colour costa can paint; add its RGB as the rule planner does.

    Raises:
        PlanningError: the result names no known colour (the re-ask quotes this).
    """
    if s.kind != "object_recoloration":
        return s
    rgb = parse_colour(s.result or "")
    if rgb is None and s.result:
        words = s.result.split()  # "vivid red": the colour it ends with
        rgb = next((c for k in range(min(3, len(words) - 1), 0, -1) if (c := parse_colour(" ".join(words[-k:])))), None)
    if rgb is None:
        raise PlanningError(
            f"subtask {s.id!r} recolours to {s.result!r}, which is not a colour costa knows: use a colour name "
            "(e.g. 'light blue') or #rrggbb, or report the request as unsupported"
        )
    return s.model_copy(update={"params": {**s.params, "rgb": list(rgb)}})


def plan_with_llm(
    client: LlmClient,
    instruction: str,
    table: Mapping[str, SubtaskSpec],
    image: np.ndarray | None = None,
    ocr_text: Sequence[str] = (),
    history: Sequence[str] = (),
) -> Generator[Event, None, LlmPlanOutcome]:
    """Ask the model for a plan; yield an `LlmCall` per request; return the outcome.

    Args:
        client: the endpoint's client.
        instruction: the user's instruction (sent as quoted data).
        table: subtask kinds (id → spec) the plan may use; the prompt lists them.
        image: RGB uint8 image, sent downscaled as a PNG data URL when given.
        ocr_text: lines read from the image, sent as quoted data (never as instructions).
        history: earlier instructions of this session, sent as quoted data for context.

    Returns:
        A validated plan, a question for the user, or a failure reason (the caller falls back to the rule planner).
    """
    image_url = image_data_url(image) if image is not None else None
    messages = build_plan_messages(table, instruction, ocr_text, history, image_url)
    error: str | None = None
    for purpose in ("plan", "plan re-ask"):
        try:
            model = client.model()
            reply = client.chat(messages, purpose)
        except LlmError as e:
            yield from e.calls
            return LlmPlanOutcome(failure=f"LLM planning failed ({e})")
        yield from reply.calls
        try:
            parsed = parse_plan_reply(reply.text, table, instruction, f"llm:{model}")
        except (ValueError, PlanningError) as e:
            error = str(e)
            messages = [*messages, {"role": "assistant", "content": reply.text}, build_reask_message(error)]
            continue
        return LlmPlanOutcome(plan=parsed.plan, question=parsed.question)
    return LlmPlanOutcome(failure=f"the LLM's plan was unusable twice (last error: {error})")
