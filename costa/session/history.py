"""A session's history as every interface sees it: undo / redo / branch, versions and turns numbered within the
session, stored turns rebuilt as views, evaluator scores, CSV and the reproducibility bundle.

`SessionHistory` is one object the session core holds (`SessionCore.versions`): it reads and writes the store, takes
the session's lock for every write (`writing`, the core's), keeps exported files in the sessions' temporary folders
(`runtimes`) and asks the previews which subtasks pointing would help.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from costa.errors import InputError, StorageError
from costa.eventlog import event_from_dict
from costa.session.preview import Previews
from costa.session.runtime import Runtimes
from costa.session.view import GraphLayout, TurnView
from costa.store import Session, Store, Turn, Version, accuracy
from costa.store.database import os_fault
from costa.store.files import whole_files
from costa.types import Plan

#: Free bytes an export must leave on COSTA_HOME's disk beyond its own size again: Gradio copies each file it serves
#: into its cache there (a copy that fails is Gradio's bare error, not ours).
SERVE_SPARE = 1 << 20
#: Versions listed in the gallery and the version tree (the newest).
SHOWN_VERSIONS = 60
#: A stored turn that is still running in this process, shown by a page that did not start it (or was reloaded).
STILL_RUNNING = (
    "⏳ This turn is still running: it started before this page was loaded (in another tab, or before a reload). "
    "Its result appears here when it ends."
)


@dataclass(frozen=True)
class VersionRow:
    """A version with its number within the session (v1 is the session's first image)."""

    number: int
    version: Version


@dataclass(frozen=True)
class TurnDetail:
    """One stored turn for the evaluator: its view, subtasks (id, kind name) and before/after images."""

    turn: Turn
    number: int
    view: TurnView
    subtasks: tuple[tuple[str, str], ...]
    images: tuple[np.ndarray, np.ndarray] | None


class SessionHistory:
    """Undo, redo, branch, numbered history, stored views, scores and exports (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        services: Any,
        previews: Previews,
        runtimes: Runtimes,
        writing: Callable[[str], AbstractContextManager[Any]],
    ) -> None:
        self.store, self.services, self.previews, self.runtimes, self.writing = (
            store, services, previews, runtimes, writing
        )  # fmt: skip
        self.settings = services.settings
        self.vocabulary = previews.vocabulary
        self._exports: dict[str, str | None] = {}  # exported file name -> the user who exported it
        self._lock = threading.Lock()

    # ----------------------------------------------------------------------------------------------- numbering

    def version_rows(self, session_id: str) -> list[VersionRow]:
        return [VersionRow(i, v) for i, v in enumerate(self.store.versions(session_id), 1)]

    def version_number(self, session_id: str, version_id: int | None) -> int | None:
        if version_id is None:
            return None
        for row in self.version_rows(session_id):
            if row.version.id == version_id:
                return row.number
        return None

    # ---------------------------------------------------------------------------------------- undo/redo/branch

    def _undo_target(self, v: Version) -> int | None:
        if v.kind == "turn" and v.turn_id is not None:
            return self.store.turn(v.session_id, v.turn_id).base_version
        return v.parent_id

    def undo(self, session_id: str, owner: str | None) -> Version:
        """Go back to the version before the current one's turn (or upload); redo can return."""
        session = self.store.session(session_id, owner)
        with self.writing(session.id):
            session = self.store.session(session_id, owner)
            if session.head is None:
                raise InputError("nothing to undo: there is no image yet")
            target = self._undo_target(self.store.version(session.id, session.head))
            if target is None:
                raise InputError("nothing to undo: this is the first version")
            self.store.set_head(session.id, target, (*session.redo, session.head))
        return self.store.version(session.id, target)

    def redo(self, session_id: str, owner: str | None) -> Version:
        session = self.store.session(session_id, owner)
        with self.writing(session.id):
            session = self.store.session(session_id, owner)
            if not session.redo:
                raise InputError("nothing to redo")
            *rest, target = session.redo
            self.store.set_head(session.id, target, rest)
        return self.store.version(session.id, target)

    def branch(self, session_id: str, owner: str | None, version_id: Any) -> Version:
        """Make any version current; the next edit starts a new branch and the old future is kept."""
        session = self.store.session(session_id, owner)
        try:
            vid = int(version_id)
        except (TypeError, ValueError, OverflowError) as e:
            raise InputError(f"version id must be a whole number, got {version_id!r}") from e
        with self.writing(session.id):
            v = self.store.version(session.id, vid)
            self.store.set_head(session.id, v.id, ())
        return v

    # ------------------------------------------------------------------------------------------------- reading

    def before_after(self, session_id: str, owner: str | None) -> tuple[np.ndarray, np.ndarray] | None:
        """(image before the current version's turn, current image), or None without history."""
        session = self.store.session(session_id, owner)
        if session.head is None:
            return None
        v = self.store.version(session.id, session.head)
        img = self.store.load_image(v)
        base = self._undo_target(v)
        before = self.store.load_image(self.store.version(session_id, base)) if base is not None else img
        return (before if before.shape == img.shape else img), img

    def compare(self, session_id: str, owner: str | None, version_id: int) -> tuple[VersionRow, Any]:
        """A version and (its parent's image, its image) for the History tab."""
        session = self.store.session(session_id, owner)
        rows = {r.version.id: r for r in self.version_rows(session.id)}
        if version_id not in rows:
            raise InputError(f"version {version_id} does not exist in this session")
        v = rows[version_id].version
        img = self.store.load_image(v)
        before = self.store.load_image(self.store.version(session.id, v.parent_id)) if v.parent_id else img
        return rows[version_id], ((before if before.shape == img.shape else img), img)

    def summary(self, session_id: str, owner: str | None) -> dict[str, Any]:
        """The session's versions and turns as JSON-ready data (ids for the API, numbers as the page shows them)."""
        session = self.store.session(session_id, owner)
        rows = self.version_rows(session.id)
        turns = self.store.turns(session.id)
        head = self.store.version(session.id, session.head) if session.head is not None else None
        return {
            "session_id": session.id,
            "head": session.head,
            "can_undo": head is not None and self._undo_target(head) is not None,
            "can_redo": bool(session.redo),
            "versions": [{**r.version.summary(), "number": r.number} for r in rows],
            "turns": [
                {
                    "id": t.id,
                    "number": i,
                    "instruction": t.instruction,
                    "status": t.status,
                    "base_version": t.base_version,
                    "result_version": t.result_version,
                    "subtasks": [s["id"] for s in (t.plan or {}).get("subtasks", [])],
                    "seconds": t.summary.get("seconds"),
                    "tool_seconds": t.summary.get("tool_seconds"),
                }
                for i, t in enumerate(turns, 1)
            ],
        }

    def turn_views(self, session_id: str, owner: str | None, last: int = 20) -> list[TurnView]:
        """Stored turns rebuilt as views (the chat and diagrams after a page refresh)."""
        session = self.store.session(session_id, owner)
        numbers = {r.version.id: r.number for r in self.version_rows(session.id)}
        turns = self.store.turns(session.id)
        out = []
        for i, t in enumerate(turns, 1):
            if i > len(turns) - last:
                view = self.view_of(t, i)
                view.result_number = numbers.get(t.result_version) if t.result_version is not None else None
                out.append(view)
        return out

    def view_of(self, turn: Turn, number: int | None = None) -> TurnView:
        p = turn.params
        view = self.vocabulary.view(
            turn.instruction,
            float(p.get("threshold", self.settings.threshold)),
            turn_id=turn.id,
            turn_number=number or p.get("number"),
            region_note=p.get("region_note", ""),
        )
        view.reading = str(p.get("reading", ""))
        if turn.plan:
            plan = Plan.model_validate(turn.plan)
            view.plan = plan
            from costa.graph import build_plan_graph

            given = frozenset(p.get("given", ()))
            ready = self.services.is_ready_fn()
            tg = build_plan_graph(self.services.tables, plan, ready, {s.id: given for s in plan.subtasks})
            view.layout = GraphLayout.from_tool_graph(tg, self.previews.estimate)
            view.needs_pointing = self.previews.pointing_subtasks(plan, tg.unavailable)
        for d in turn.events:
            ev = event_from_dict(d)
            if ev is not None:
                view.apply(ev)
        if turn.status == "running" and (
            self.runtimes.busy(turn.session_id) or self.store.db.turn_held(turn.session_id)
        ):  # in this process or another replica, right now (another tab's, or the page was just reloaded)
            view.status = "searching"
            view.notes.append(STILL_RUNNING)
        elif turn.status in ("running", "interrupted"):
            view.status = "stopped"
            view.notes.append("This turn was interrupted (the app stopped while it ran); the image is unchanged.")
        else:
            view.status = turn.status
            view.stopped_by = str(turn.summary.get("stopped_by", "")) if turn.status == "stopped" else ""
        view.result_version = turn.result_version
        self.previews.after_turn_pointing(view, p.get("given", ()))
        from costa.session.targets import target_panels

        target_panels(view)  # the follow-ups on an unverified target, as the live turn showed them
        return view

    def session_totals(self, session_id: str) -> list[dict[str, Any]]:
        return [t.summary for t in self.store.turns(session_id)]

    def turn_choices(self, session_id: str, owner: str | None) -> list[tuple[str, int]]:
        """(label, turn id) of the session's finished turns that have subtasks to score."""
        session = self.store.session(session_id, owner)
        out = []
        for i, t in enumerate(self.store.turns(session.id), 1):
            if t.plan and t.plan.get("subtasks") and t.status != "running":
                out.append((f"turn {i}: {t.instruction[:60]} ({t.status})", t.id))
        return out

    def turn_detail(self, session_id: str, owner: str | None, turn_id: Any) -> TurnDetail:
        """One turn for the evaluator: its view, subtasks and before/after images."""
        session = self.store.session(session_id, owner)
        turn = self.store.turn(session.id, turn_id)
        number = [t.id for t in self.store.turns(session.id)].index(turn.id) + 1
        subtasks = tuple(
            (s["id"], self.vocabulary.names.get(s["kind"], s["kind"])) for s in (turn.plan or {}).get("subtasks", [])
        )
        images = None
        if turn.base_version is not None:
            before = self.store.load_image(self.store.version(session.id, turn.base_version))
            after = (
                self.store.load_image(self.store.version(session.id, turn.result_version))
                if turn.result_version is not None
                else before
            )
            images = (before, after) if before.shape == after.shape else (after, after)
        return TurnDetail(turn, number, self.view_of(turn, number), subtasks, images)

    # -------------------------------------------------------------------------------------------------- scores

    def score(
        self,
        session_id: str,
        owner: str | None,
        turn_id: Any,
        subtask_id: str,
        score: Any,
        comment: str = "",
        evaluator: str = "",
    ) -> dict[str, Any]:
        """Record a subtask score; return the session's accuracies."""
        session = self.store.session(session_id, owner)
        try:
            tid, value = int(turn_id), float(score)
        except (TypeError, ValueError, OverflowError) as e:
            raise InputError(f"turn id and score must be numbers, got {turn_id!r} and {score!r}") from e
        self.store.save_score(session.id, tid, subtask_id, value, comment, owner or evaluator)
        return self.accuracy(session.id, owner)

    def accuracy(self, session_id: str, owner: str | None) -> dict[str, Any]:
        session = self.store.session(session_id, owner)
        scores = self.store.scores(session.id)
        tasks, overall = accuracy(scores)
        numbers = {t.id: i for i, t in enumerate(self.store.turns(session.id), 1)}
        return {
            "tasks": {str(k): v for k, v in tasks.items()},
            "overall": overall,
            "numbers": {str(k): numbers.get(k) for k in tasks},
            "scores": [
                {
                    "turn_id": s.turn_id,
                    "turn_number": numbers.get(s.turn_id),
                    "subtask_id": s.subtask_id,
                    "score": s.score,
                    "comment": s.comment,
                    "evaluator": s.evaluator,
                }
                for s in scores
            ],
        }

    def export_owner(self, name: str) -> tuple[bool, str | None]:
        """Whether file `name` was exported by this process, and for whom (None: no login)."""
        with self._lock:
            if name in self._exports:
                return True, self._exports[name]
        return False, None

    def _exported(self, path: Path, owner: str | None) -> Path:
        with self._lock:
            self._exports[path.name] = owner
        path.chmod(0o600)
        return path

    def scores_csv(self, session_id: str, owner: str | None) -> Path:
        from costa.bundle import export_name, scores_csv

        session = self.store.session(session_id, owner)
        path = self.runtimes.tmp_dir(session.id) / f"costa-scores-{export_name(session.id)}.csv"
        with whole_files([path], SERVE_SPARE) as (part,):
            part.write_text(scores_csv(self.store, session.id), encoding="utf-8")
        return self._exported(path, owner)

    # -------------------------------------------------------------------------------------------------- export

    def export(self, session_id: str, owner: str | None) -> tuple[Path | None, Path]:
        """Write the current image (PNG) and the reproducibility bundle (zip) to the session's temp folder.

        Raises:
            StorageError: a version's file is missing (named), or COSTA_HOME's disk is full or read-only.
        """
        session = self.store.session(session_id, owner)
        lost = [row.number for row in self.version_rows(session.id) if not Path(row.version.file).is_file()]
        if lost:
            raise StorageError(
                f"the image file{'s' if len(lost) > 1 else ''} of version{'s' if len(lost) > 1 else ''} "
                f"{', '.join(f'v{n}' for n in lost[:10])} {'are' if len(lost) > 1 else 'is'} missing from COSTA_HOME "
                "(removed outside costa): nothing was exported; `python -m costa store check` lists what is lost and "
                "`python -m costa store repair` drops it"
            )
        try:
            return self._export(session, owner)
        except OSError as e:  # the temporary folder is on COSTA_HOME's disk: full or read-only
            raise (os_fault(e) or e) from e

    def _export(self, session: Session, owner: str | None) -> tuple[Path | None, Path]:
        """Both files written under temporary names and renamed together (`whole_files`): a disk that fills in the
        middle leaves no half-written file and the export on screen whole, and the disk must keep room for the copy
        Gradio makes of both to serve them (`SERVE_SPARE`)."""
        from costa.bundle import export_name, write_bundle

        tmp = self.runtimes.tmp_dir(session.id)
        image_path: Path | None = None
        stored: Path | None = None
        if session.head is not None:
            number = self.version_number(session.id, session.head)
            stored = Path(self.store.version(session.id, session.head).file)  # WebP/PNG, or the upload's own file
            image_path = tmp / f"costa-v{number}-{export_name(session.id)}{stored.suffix or '.png'}"
        bundle = tmp / f"costa-session-{export_name(session.id)}.zip"
        with whole_files([bundle] if image_path is None else [bundle, image_path], SERVE_SPARE) as parts:
            write_bundle(self.store, session, self.services.tables, self.settings, parts[0])
            if stored is not None:
                shutil.copyfile(stored, parts[1])
        if image_path is not None:
            self._exported(image_path, owner)
        return image_path, self._exported(bundle, owner)
