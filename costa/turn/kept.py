"""What the instruction keeps as it is, located before the edits run ("make the sky blue and keep the trees
unchanged").

The planner gives each kept object an `object_segmentation` subtask with `params["role"] = "keep"`
(`costa.planner.keeps`). `locate_kept` searches each of them on its own, on the turn's input image and without the
user's pointing (that names the edit's target, not the kept thing), before the edits' search: the masks found become
the start state's `kept` artifact, which every later tool output respects and every edit's check verifies
(`costa.constraints`, `costa.checks.region.kept_unchanged`). A kept thing that cannot be located does not stop the
edit: its subtask is reported skipped with the reason, so the turn says that this constraint was not verified.
"""

from __future__ import annotations

from collections.abc import Generator

import numpy as np

from costa.events import Event
from costa.turn.graphs import build_graph
from costa.turn.records import TurnState, UserRegion
from costa.turn.search import SearchOptions, TurnContext, run_search
from costa.types import EditState, Plan

#: The subtask role the planner gives a kept thing's segmentation.
KEEP_ROLE = "keep"


def keep_subtask_ids(plan: Plan) -> tuple[str, ...]:
    """Ids of the plan's subtasks that locate a kept thing."""
    return tuple(s.id for s in plan.subtasks if s.params.get("role") == KEEP_ROLE)


def without_keeps(plan: Plan) -> Plan:
    """The plan's edits: every subtask but those that locate a kept thing (no edit depends on them)."""
    keep = set(keep_subtask_ids(plan))
    rest = tuple(s.model_copy(update={"parents": tuple(p for p in s.parents if p not in keep)})
                 for s in plan.subtasks if s.id not in keep)  # fmt: skip
    return plan.model_copy(update={"subtasks": rest})


def locate_kept(
    ctx: TurnContext, plan: Plan, state: EditState
) -> Generator[Event, None, tuple[EditState, dict[str, str], list[str]]]:
    """Locate every kept thing of `plan` in `state`'s image; yield the searches' events.

    Returns:
        The state with the union of the kept masks as its `kept` artifact (unchanged when none was found), the keep
        subtasks not located (id → why, to report as skipped), and the ids of those located.
    """
    kept: np.ndarray | None = None
    missing: dict[str, str] = {}
    located: list[str] = []
    for sid in keep_subtask_ids(plan):
        subtask = plan.by_id(sid)
        # its graph as the turn's would have it (a grounder that cannot find it by its words is left out), but
        # without the user's pointing
        tg = build_graph(ctx.services, plan.model_copy(update={"subtasks": (subtask,)}), UserRegion())
        found = None
        if sid not in tg.unavailable:
            result = yield from run_search(ctx, tg.graph, TurnState(EditState(state.image)), SearchOptions())
            if result.found and result.state is not None:
                found = result.state.edit.artifacts.get("kept")
        if isinstance(found, np.ndarray) and found.shape == state.image.shape[:2] and found.any():
            kept = found if kept is None else kept | found
            located.append(sid)
            continue
        why = "no ready tool can find it" if sid in tg.unavailable else "no tool found it (see the ledger)"
        missing[sid] = (
            f"could not locate the {subtask.target} (to keep unchanged): {why}; the edit ran, but that it left the "
            f"{subtask.target} as it was is not verified"
        )
    if kept is None:
        return state, missing, located
    return state.with_artifacts(kept=kept), missing, located
