"""One campaign item run through the session core — the same `prepare` → `run` path as the page and `costa edit` —
and the subtasks it leaves for evaluators (`Unit`s) with costa's own verdict on each.

Each item gets a session of its own, owned by `campaign:<name>` (so no signed-in user's session list shows it). The
task's first turn uploads its image; later turns edit the session's current image, as a person continuing the
conversation would. Campaign turns run like the CLI: the subtasks that do not need an unfound target run ("do the
rest"), and a target found but not verified is edited anyway (`accept_unverified`), so evaluators see the candidate
result; costa's verdict on it stays "unverified" (or "proposed"), which is exactly what the human verdicts label.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from costa.campaign.records import Campaign, Item, Unit
from costa.campaign.tasks import Task, TurnSpec
from costa.errors import InputError, StorageError

#: A turn's result as evaluators see it when nothing was saved: the image before the turn, unchanged.
STOPPED = "stopped"


class ItemStoppedError(Exception):
    """The run was interrupted (Ctrl-C) while this item ran: it is run again from the start next time."""


@dataclass
class ItemOutcome:
    units: list[Unit]
    tool_seconds: float
    turn_seconds: float


def owner_of(campaign: str) -> str:
    """The store owner of a campaign's sessions (a name no login can have: it holds a colon)."""
    return f"campaign:{campaign}"


def verdict_of(view: Any, sid: str) -> str:
    """costa's own verdict on subtask `sid` of a finished turn's view (see `costa.campaign.records.VERDICTS`)."""
    outcome = view.outcome
    if sid in (getattr(view, "proposed", None) or {}) or (outcome is not None and sid in outcome.proposed):
        return "proposed"  # the outcome's too: an accepted proposal may reach the view as done
    if sid in view.unverified or sid in view.ask_pointing or (outcome is not None and sid in outcome.unverified):
        return "unverified"  # edited anyway (accept_unverified): costa found the target but could not verify it
    if sid in view.done_subtasks:
        return "done"
    skipped = outcome.skipped if outcome is not None else {}
    return "skipped" if sid in view.unavailable or sid in skipped else "failed"


def _describe(name: str, target: str | None, result: str | None) -> str:
    text = name
    if target:
        text += f" · “{target}”"
    if result:
        text += f" → “{result}”"
    return text


def turn_units(
    core: Any, session_id: str, item_id: str, number: int, spec: TurnSpec, view: Any, head: int | None = None
) -> list[Unit]:
    """The units of one finished turn: its planned subtasks, its unsupported parts, or the turn when unplanned.

    `head` is the session's current version before the turn: the image an evaluator sees as "before" (and "after")
    for a turn that kept no record of its own (refused before it ran, or nothing to run), so that every unit can be
    shown."""
    turn = core.store.turn(session_id, view.turn_id) if view.turn_id is not None else None
    base = turn.base_version if turn is not None and turn.base_version is not None else head
    final = turn.result_version if turn is not None and turn.result_version is not None else base
    per_subtask = {
        v.subtask_id: v.id
        for v in core.store.versions(session_id)
        if turn is not None and v.turn_id == turn.id and v.kind == "subtask" and v.subtask_id
    }
    before: dict[str, int | None] = {}
    after: dict[str, int | None] = {}
    if turn is not None and turn.result_version is not None:  # per-subtask versions, in the order they were done
        prev = base
        for sid, done in view.done_subtasks.items():
            if done.image is None:  # read the image as it stood (a detection's boxes are in its pixels)
                before[sid] = after[sid] = prev
                continue
            before[sid], after[sid] = prev, per_subtask.get(sid, turn.result_version)
            prev = after[sid]
    plan = view.plan
    units: list[Unit] = []

    def add(unit: str, kind: str, category: str, description: str, verdict: str, **extra: Any) -> None:
        units.append(
            Unit(item_id, f"t{number}.{unit}", len(units), number, kind, category, description, verdict,
                 extra.pop("before", base), extra.pop("after", final), pointing=spec.pointing, **extra)
        )  # fmt: skip

    at = base  # the image as it stands at each subtask, in the plan's order
    for s in plan.subtasks if plan is not None else ():
        if s.id in before:
            at = after[s.id]
        else:  # not done (skipped, failed): before and after are the image as it stood at its place in the plan
            before[s.id] = after[s.id] = at
        name = core.names.get(s.kind, s.kind)
        done = view.done_subtasks.get(s.id)
        tool = done.tools[-1] if done is not None and done.tools else ""
        answer = done.result if done is not None and s.kind in core.reads and done.result else ""
        boxes = done.boxes if done is not None else ()
        add(s.id, s.kind, name, _describe(name, s.target, s.result), verdict_of(view, s.id),
            before=before[s.id], after=after[s.id], tool=tool, answer=answer,
            boxes=boxes)  # fmt: skip
    for n, part in enumerate(plan.unsupported if plan is not None else (), 1):
        add(f"u{n}", "unsupported", "Unsupported", f"Part of the instruction: “{part.text}”", "unsupported")
    if not units:
        add("turn", "unplanned", "Unplanned", f"The whole instruction: “{spec.instruction}”", "unplanned")
    return units


def run_item(
    core: Any, campaign: Campaign, item: Item, stop: threading.Event, on_session: Callable[[str], None]
) -> ItemOutcome:
    """Run every turn of the item's task under its condition in a new session; return its units and costs.

    `on_session` is told the new session's id before the first turn runs (the run records it, and Ctrl-C stops
    that session's turn through `SessionCore.stop`).

    Raises:
        ItemStoppedError: `stop` was set, or a turn ended stopped.
        InputError: the task cannot be run as written (an image or mask that does not fit, a box outside it).
    """
    from costa.session.core import Pointing
    from costa.session.turns import TurnOptions, read_brush

    task: Task = campaign.tasks.by_id(item.task_id)
    owner = owner_of(campaign.name)
    c = item.condition
    opts = TurnOptions.validate(
        core.settings, c.alpha, c.threshold, c.mode, c.reflect, action="rest", accept_unverified=True
    )
    session_id = core.new_session(owner).id
    on_session(session_id)
    # The task's photo is stored before the first turn (not only when a turn keeps a version, as the page does):
    # every unit needs a "before" an evaluator can see, also a turn that changes nothing.
    core.upload(session_id, owner, task.image, task.image.name)
    units: list[Unit] = []
    tool_seconds = turn_seconds = 0.0
    for number, spec in enumerate(task.turns, 1):
        if stop.is_set():
            raise ItemStoppedError(item.id)
        head, image = core.head(session_id, owner)
        if head is None or image is None:  # stored above, and a turn only adds versions
            raise StorageError(f"task {task.id} turn {number}: its session has no current image")
        h, w = image.shape[:2]
        brush = read_brush(spec.brush, w, h) if spec.brush is not None else None
        clicks = [(p.x, p.y) for p in spec.points if p.positive]
        negatives = [(p.x, p.y) for p in spec.points if not p.positive]
        pointing = Pointing(clicks, spec.box, brush, negatives)
        req = core.prepare(session_id, owner, spec.instruction, opts, pointing, None)
        view = None
        for shown, _ev in core.run(req):
            view = shown
        if view is None:
            raise InputError(f"task {task.id} turn {number}: the session core returned no turn")
        if view.status == STOPPED or stop.is_set():
            raise ItemStoppedError(item.id)
        totals = view.totals()
        tool_seconds += float(totals["tool_seconds"])
        turn_seconds += float(totals["seconds"])
        units.extend(turn_units(core, session_id, item.id, number, spec, view, head.id))
    return ItemOutcome([_renumber(u, i) for i, u in enumerate(units)], tool_seconds, turn_seconds)


def _renumber(u: Unit, position: int) -> Unit:
    from dataclasses import replace

    return replace(u, position=position)
