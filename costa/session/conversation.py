"""The conversation around the edits: history commands said in words, "change it back", and questions.

`SessionCore.run` asks `conversation_turn` first; when the instruction is one of these it is answered here and no
search runs:

- **History commands** (`parse_command`): "undo", "undo that", "go back", "go back two steps", "redo", "start over",
  "branch from version 3" call the same `undo` / `redo` / `branch` the page's buttons and the API call, so the result
  is the same; nothing is stored as a turn (as with the buttons), the chat says what happened.
- **Restores** ("change it back", "put the rose back", or the opposite edit, `costa.reflect.references`): the region
  the last change of that thing touched is put back as it was before that change, pixel for pixel (only the pixels
  that change made, so later edits elsewhere stay); stored as a turn with a version, so undo works on it too.
- **Questions**: a reference that could mean two things ("it" after a turn that edited the mug and the plate) asks
  one short question; nothing is stored or changed.

Memory is read along the current version's path (`path_memory`): after an undo, the undone turn's edits are not
what is on the image.

>>> parse_command("go back two steps"), parse_command("branch from version 3"), parse_command("make it red")
(HistoryCommand(op='undo', count=2, version=None), HistoryCommand(op='branch', count=1, version=3), None)
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from costa.errors import InputError
from costa.reflect.memory import SessionMemory, TurnRecord, record_to_row
from costa.reflect.references import Resolution, Restore
from costa.session.view import TurnView

if TYPE_CHECKING:
    from costa.events import Event
    from costa.session.core import SessionCore, TurnRequest
    from costa.store import Session, Store


@dataclass(frozen=True)
class HistoryCommand:
    """A history operation said in words: `op` undo / redo / start_over / branch, `count` steps, `version` number."""

    op: str
    count: int = 1
    version: int | None = None


_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
            "ten": 10, "a": 1, "once": 1, "twice": 2, "thrice": 3}  # fmt: skip
_N = r"(?P<n>\d+|one|two|three|four|five|six|seven|eight|nine|ten|a)"
_LEAD = r"(?:(?:please|ok|okay|hmm|no|actually|oops|sorry|ugh|now|just|can\s+you|could\s+you)[,!.]?\s+)*"
_TAIL = r"(?:\s+(?:please|for\s+me|thanks|thank\s+you))*[.!]*"
_STEPS = r"(?:steps?|edits?|changes?|turns?|versions?|times?)"
_COMMANDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (op, re.compile(_LEAD + pattern + _TAIL, re.IGNORECASE))
    for op, pattern in (
        (
            "start_over",
            r"(?:let'?s\s+)?(?:start\s+(?:over|again|from\s+scratch)|begin\s+again|undo\s+(?:everything|all(?:\s+of\s+it)?)"
            r"|reset(?:\s+(?:everything|it\s+all|the\s+(?:image|photo|picture)))?|revert\s+(?:everything|to\s+the\s+original"
            r"(?:\s+(?:image|photo|picture))?)|(?:go\s+)?back\s+to\s+the\s+(?:original|start|beginning)"
            r"(?:\s+(?:image|photo|picture|version))?|show\s+me\s+the\s+original(?:\s+again)?)",
        ),
        (
            "branch",
            r"(?:branch|go\s+back|jump|return|switch|revert|restore|roll\s+back|continue|start|work)\s+(?:off\s+)?"
            r"(?:from|to|on)\s+(?:version|v)\s*#?(?P<v>\d+)|(?:use|take|pick|choose|open)\s+(?:version|v)\s*#?(?P<v2>\d+)"
            r"(?:\s+again)?",
        ),
        (
            "undo",
            rf"(?:undo|revert|go\s+back|step\s+back|roll\s+back|take\s+(?:that|it)\s+back)(?:\s+{_N}\s+{_STEPS}|\s+"
            r"(?P<w>twice|thrice|once))?(?:\s+(?:that|it|this|the\s+last\s+(?:one|change|edit|step|turn)|"
            r"the\s+last\s+(?P<n2>\d+|two|three|four|five)\s+(?:changes|edits|steps|turns)|last\s+(?:change|edit|step)|"
            r"(?:one|a)\s+step))?(?:\s+(?:again|back))?",
        ),
        (
            "redo",
            rf"(?:redo|go\s+forward|step\s+forward|undo\s+the\s+undo)(?:\s+{_N}\s+{_STEPS}|\s+(?P<w>twice|thrice|once))?"
            r"(?:\s+(?:that|it|this|the\s+last\s+(?:one|change|edit|step|turn)|(?:one|a)\s+step))?",
        ),
    )
)


def parse_command(text: str) -> HistoryCommand | None:
    """A history command said in words ("undo", "go back two steps", "start over", "branch from version 3"), or None
    when `text` is an edit."""
    s = " ".join(text.strip().split())
    for op, pattern in _COMMANDS:
        m = pattern.fullmatch(s)
        if m is None:
            continue
        groups = m.groupdict()
        if op == "branch":
            return HistoryCommand("branch", 1, int(groups.get("v") or groups.get("v2") or 0))
        word = (groups.get("n") or groups.get("n2") or groups.get("w") or "one").lower()
        count = int(word) if word.isdigit() else _NUMBERS.get(word, 1)
        return HistoryCommand(op, max(1, count))
    return None


# ----------------------------------------------------------------------------------------------------- memory


def path_turn_ids(store: Store, session: Session) -> set[int]:
    """Ids of the turns whose versions lie on the path from the session's first version to its current one."""
    if session.head is None:
        return set()
    by_id = {v.id: v for v in store.versions(session.id)}
    out: set[int] = set()
    vid: int | None = session.head
    while vid is not None and vid in by_id:
        v = by_id[vid]
        if v.turn_id is not None:
            out.add(v.turn_id)
        vid = v.parent_id
    return out


def path_memory(store: Store, session: Session) -> SessionMemory:
    """The session's memory of the turns on the current version's path (oldest first), each numbered as the session
    shows it (the store's turn ids run across sessions: "'it' = the image (turn 3)" was said in a session's second
    turn); `SessionMemory.turn_id` gives the id back."""
    from costa.reflect.session import load_session_memory

    memory = load_session_memory(store, session.id)
    on_path = path_turn_ids(store, session)
    numbers = {t.id: i for i, t in enumerate(store.turns(session.id), 1)}  # as the turn's own `number` counts
    kept = [replace(t, turn=numbers.get(t.turn, t.turn)) for t in memory.turns if t.turn in on_path]
    return SessionMemory(kept, {numbers[i]: i for i in on_path if i in numbers})


# ------------------------------------------------------------------------------------------------------- turns


def conversation_turn(core: SessionCore, req: TurnRequest) -> Iterator[tuple[TurnView, Event | None]] | None:
    """Answer `req` when it is a history command, a restore or an ambiguous reference; None for an edit (the session
    core then plans and searches as usual)."""
    command = parse_command(req.instruction)
    if command is not None:
        return _command_turn(core, req, command)
    if req.upload is not None:
        return None  # a new image: an edit of it
    session = core.store.session(req.session_id, req.owner)
    memory = path_memory(core.store, session)
    resolution = memory.resolve(req.instruction)
    if resolution.restore is not None:  # the store's id of the turn to undo the change of (it is read by that id)
        resolution = replace(
            resolution, restore=replace(resolution.restore, turn=memory.turn_id(resolution.restore.turn))
        )
    if req.region.artifacts():
        # The user pointed: an edit of what they pointed at — unless it is "put it back" on the very thing that was
        # changed (a box left in the field from the edit it undoes); a restore pointed elsewhere is an edit there.
        if resolution.restore is not None and points_at(req.region, resolution.restore.region):
            return _restore_turn(core, req, session, resolution)
        return None
    if resolution.question:
        return _question_turn(core, req, resolution.question)
    if resolution.restore is not None:
        return _restore_turn(core, req, session, resolution)
    return None


def points_at(region: Any, changed: np.ndarray) -> bool:
    """Whether the user's pointing (`costa.turn.records.UserRegion`) lies on the changed pixels `changed` (bool H×W):
    a click on them, or a box or brush covering at least half of them."""
    h, w = changed.shape
    total = int(changed.sum())
    if total == 0:
        return False
    if any(0 <= p.y < h and 0 <= p.x < w and changed[p.y, p.x] for p in region.points):
        return True
    pointed = np.zeros((h, w), bool)
    for b in region.boxes:
        pointed |= b.to_mask(h, w)
    for m in region.masks:
        if m.data.shape == (h, w):
            pointed |= m.data
    return int((pointed & changed).sum()) >= 0.5 * total


def _view(core: SessionCore, req: TurnRequest, status: str) -> TurnView:
    view = TurnView(
        req.instruction, core.names, req.options.threshold, reads=core.reads, unreferenced=core.unreferenced
    )
    view.status = status
    return view


def _command_turn(
    core: SessionCore, req: TurnRequest, command: HistoryCommand
) -> Iterator[tuple[TurnView, Event | None]]:
    view = _view(core, req, "done")
    try:
        view.notes.append(_run_command(core, req, command))
    except InputError as e:
        view.status = "failed"
        view.errors.append(str(e))
    session = core.store.session(req.session_id, req.owner)
    view.result_version = session.head
    view.result_number = core.versions.version_number(session.id, session.head)
    yield view, None


def _run_command(core: SessionCore, req: TurnRequest, command: HistoryCommand) -> str:
    """Do the command through the same calls as the buttons; return what happened, in one sentence."""
    sid, owner = req.session_id, req.owner
    if command.op == "branch":
        rows = core.versions.version_rows(sid)
        if not command.version or command.version > len(rows):
            raise InputError(f"there is no version {command.version}: this session has versions 1 to {len(rows)}")
        v = core.versions.branch(sid, owner, rows[command.version - 1].version.id)
        return f"Back to version {command.version} ({v.label}); the next edit starts a branch, the rest is kept."
    if command.op == "start_over":
        rows = core.versions.version_rows(sid)
        if not rows:
            raise InputError("there is no image yet: upload one first")
        core.versions.branch(sid, owner, rows[0].version.id)
        return "Back to the original image (version 1); every later version is kept in History."
    step = core.versions.undo if command.op == "undo" else core.versions.redo
    done = 0
    for _ in range(command.count):
        try:
            step(sid, owner)
        except InputError:
            if done == 0:
                raise
            break
        done += 1
    number = core.versions.version_number(sid, core.store.session(sid, owner).head)
    verb = "Undid" if command.op == "undo" else "Redid"
    more = f" (only {done} could be)" if done < command.count else ""
    return f"{verb} {done} step{'s' if done != 1 else ''}{more}: the image is version {number} now."


def _question_turn(core: SessionCore, req: TurnRequest, question: str) -> Iterator[tuple[TurnView, Event | None]]:
    view = _view(core, req, "failed")
    view.question = question
    yield view, None


def _restore_turn(
    core: SessionCore, req: TurnRequest, session: Session, resolution: Resolution
) -> Iterator[tuple[TurnView, Event | None]]:
    """Put a thing back as it was before its last change, as a stored turn with a version (undo works on it)."""
    restore = resolution.restore
    assert restore is not None and req.base is not None
    view = _view(core, req, "searching")
    yield view, None
    with core.writing(session.id):  # one turn at a time, as for an edit
        _restore_locked(core, req, session, resolution, view)
    yield view, None


def _restore_locked(
    core: SessionCore, req: TurnRequest, session: Session, resolution: Resolution, view: TurnView
) -> None:
    restore = resolution.restore
    assert restore is not None and req.base is not None
    if core.store.session(session.id, req.owner).head != req.base.id:
        raise InputError("the current image changed while this request waited: send it again")
    t0 = time.perf_counter()
    number = len(core.store.turns(session.id)) + 1
    turn_id = core.store.start_turn(session.id, req.base.id, req.instruction, None, {"number": number, "restore": True})
    view.turn_id, view.turn_number = turn_id, number
    status, result_version = "failed", None
    try:
        image, mask = restored_image(core.store, session.id, req.image, restore)
        label = f"turn {number}: {req.instruction}"[:60]
        result_version = core.store.add_version(session.id, image, "turn", label, req.base.id, turn_id).id
        record = TurnRecord(turn_id, req.instruction, resolution.text, (("restore", restore.entity, restore.before,
                            "r1"),), (("r1", mask),))  # fmt: skip
        from costa.store import save_memory

        save_memory(core.store, session.id, turn_id, record_to_row(record))
        turn_ids = [t.id for t in core.store.turns(session.id)]
        shown = turn_ids.index(restore.turn) + 1 if restore.turn in turn_ids else restore.turn  # the session's number
        again = "as it was" if restore.before == restore.entity else f"{restore.before} again"
        view.notes.append(
            f"Changed back: {restore.entity} is {again} — its {int(mask.sum()):,} pixels put back exactly as they "
            f"were before turn {shown}; nothing else changed."
        )
        status = "done"
    except InputError as e:
        view.errors.append(str(e))
    finally:
        summary: dict[str, Any] = {"seconds": time.perf_counter() - t0, "tool_seconds": 0.0, "executions": 0}
        summary["ok"] = status == "done"
        core.store.finish_turn(turn_id, status, [], summary, result_version)  # type: ignore[arg-type]
    view.status = status
    view.result_version = result_version
    view.result_number = core.versions.version_number(session.id, result_version)


def restored_image(store: Store, session_id: str, current: np.ndarray, restore: Restore) -> tuple[np.ndarray, Any]:
    """`current` with the pixels `restore.turn` changed near the thing put back as they were before that turn.

    The pixels put back are those the turn changed at all (so a feathered edge or a faint fill residue is restored
    too) within the box of the region its subtask changed, grown by 16 px; pixels later turns changed elsewhere are
    kept.

    Raises:
        InputError: the image has been resized since (upscaled, outpainted, cropped), so the regions no longer match.
    """
    turn = store.turn(session_id, restore.turn)
    if turn.base_version is None or turn.result_version is None:
        raise InputError("the turn that changed it made no version: there is nothing to change back")
    before = store.load_image(store.version(session_id, turn.base_version))
    after = store.load_image(store.version(session_id, turn.result_version))
    if not (before.shape == after.shape == current.shape and restore.region.shape == current.shape[:2]):
        raise InputError(
            "the image has been resized since that edit (upscaled, extended or cropped), so it cannot be changed "
            "back region by region: use undo, or branch from the version before it in History"
        )
    ys, xs = np.nonzero(restore.region)
    if len(xs) == 0:
        raise InputError("that change left no pixels to put back")
    h, w = restore.region.shape
    near = np.zeros((h, w), dtype=bool)  # the changed region's box grown by 16 px: feathers and faint fill edges too
    near[max(0, int(ys.min()) - 16) : int(ys.max()) + 17, max(0, int(xs.min()) - 16) : int(xs.max()) + 17] = True
    mask = near & np.any(before != after, axis=2)
    out = current.copy()
    out[mask] = before[mask]
    return out, mask
