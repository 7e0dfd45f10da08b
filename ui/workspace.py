"""The app's core, shared by the page and the API: sessions, uploads, turns, history, scores and exports.

One `Workspace` is made per process by `build_ui` (never at import). It owns the store and, per session id, a runtime
record (a lock so a session runs one turn at a time, a stop flag, a temporary folder for exports). Everything a user
does names their session id; the store refuses ids that do not exist or belong to another logged-in user.

Methods raise `InputError` for anything the user can fix; the UI turns those into short messages.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from costa.agent import UserRegion, run_turn
from costa.errors import InputError
from costa.eventlog import event_from_dict, event_to_dict
from costa.events import ErrorEvent, Event, PlanReady, ToolFinished, ToolStarted, TurnDone
from costa.graph import build_plan_graph, subtask_chains
from costa.images import load_image
from costa.models.control import TurnControl
from costa.pointing import describe_region, region_from_pointing
from costa.search import check_alpha, predict_best
from costa.services import Services
from costa.store import Session, Store, Turn, Version, accuracy
from costa.types import Mask, Plan
from ui.targets_view import pointing_first, record_targets, targets_report
from ui.turnview import GraphLayout, TurnView

log = logging.getLogger(__name__)

#: α values the slider's readout predicts for, besides the current one.
ALPHA_GRID = (0.0, 0.5, 1.0, 1.5, 2.0)
#: Earlier instructions given to the planner as context.
HISTORY_TURNS = 8
#: Most clicks kept for pointing.
MAX_CLICKS = 8
#: Gallery thumbnails kept in memory.
THUMB_CACHE = 512
MODES = {
    "lazy": "CoSTA* lazy A* (default)",
    "eager": "CoSTA* eager A* (the published search, for comparison)",
    "fast-slow": "FaSTA* fast–slow (learned subroutines first, local A* on failure)",
}


@dataclass
class SessionRuntime:
    """In-process state of one session: one turn at a time, a stop flag, a folder for its temporary files."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)
    tmp: Path | None = None


@dataclass(frozen=True)
class PlanResult:
    """A plan (None when nothing can run) and the planner's events (LLM calls, fallbacks, questions, errors)."""

    plan: Plan | None
    events: tuple[Event, ...]


class Workspace:
    """Sessions, turns, history, scores and exports over one `Store` and one `Services`."""

    def __init__(self, services: Services, store: Store | None = None) -> None:
        self.services = services
        self.settings = services.settings
        self.store = store or Store(self.settings.home)
        self.tmp_root = Path(tempfile.mkdtemp(prefix="costa-ui-"))
        self.names = {k: v.name for k, v in services.tables.subtasks.items()}
        self.reads = frozenset(k for k, v in services.tables.subtasks.items() if not v.edits_image)
        self._runtimes: dict[str, SessionRuntime] = {}
        self._lock = threading.Lock()
        self._llm: Any = None
        self._llm_checked = False
        self._tabs: dict[str, str] = {}  # browser connection (Gradio session hash) -> costa session id
        self._fast_slow: Any = None  # costa.subroutines.executor.FastSlowRuntime, built on first fast-slow turn
        self._thumbs: dict[int, np.ndarray] = {}

    # ------------------------------------------------------------------------------------------------ sessions

    def open_session(self, session_id: str | None, owner: str | None) -> Session:
        """The caller's session when `session_id` is theirs, else a new one."""
        if session_id:
            try:
                return self.store.session(session_id, owner)
            except InputError:
                log.info("session %s… not found or not this user's; starting a new one", session_id[:6])
        return self.store.create_session(owner)

    def session(self, session_id: str, owner: str | None) -> Session:
        return self.store.session(session_id, owner)

    def runtime(self, session_id: str) -> SessionRuntime:
        with self._lock:
            rt = self._runtimes.get(session_id)
            if rt is None:
                rt = self._runtimes[session_id] = SessionRuntime()
            return rt

    def tmp_dir(self, session_id: str) -> Path:
        rt = self.runtime(session_id)
        if rt.tmp is None:
            rt.tmp = Path(tempfile.mkdtemp(prefix="s-", dir=self.tmp_root))
        return rt.tmp

    def release(self, session_id: str) -> None:
        """Delete the session's temporary files (its history stays in the store)."""
        with self._lock:
            rt = self._runtimes.get(session_id)
            if rt is None or rt.lock.locked():
                return
            tmp, rt.tmp = rt.tmp, None
            del self._runtimes[session_id]
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)

    def close(self) -> None:
        shutil.rmtree(self.tmp_root, ignore_errors=True)

    def bind(self, connection: str | None, session_id: str) -> None:
        """Remember which session a browser connection shows, so closing the tab can clean up after it."""
        if connection:
            with self._lock:
                self._tabs[connection] = session_id

    def unbind(self, connection: str | None) -> None:
        """The tab closed: delete its session's temporary files unless another tab still shows that session."""
        if not connection:
            return
        with self._lock:
            sid = self._tabs.pop(connection, None)
            still_open = sid in self._tabs.values()
        if sid is not None and not still_open:
            self.release(sid)

    def thumbnail(self, version_id: int, make: Callable[[], np.ndarray]) -> np.ndarray:
        """A cached gallery thumbnail (versions never change, so the cache needs no invalidation)."""
        with self._lock:
            thumb = self._thumbs.get(version_id)
        if thumb is None:
            thumb = make()
            with self._lock:
                if len(self._thumbs) >= THUMB_CACHE:
                    self._thumbs.pop(next(iter(self._thumbs)))
                self._thumbs[version_id] = thumb
        return thumb

    def busy(self, session_id: str) -> bool:
        rt = self._runtimes.get(session_id)
        return rt is not None and rt.lock.locked()

    # -------------------------------------------------------------------------------------------------- images

    def upload(self, session_id: str, owner: str | None, path: str | Path, name: str = "") -> tuple[Version, list[str]]:
        """Validate an uploaded file and make it the current version (undo returns to the previous one).

        Returns the version and notes for the user about conversions (animated → first frame, CMYK/16-bit → RGB).
        """
        session = self.store.session(session_id, owner)
        p = Path(path)
        if not p.is_file():
            raise InputError("the upload did not arrive: try again")
        limit = self.settings.max_upload_mb * 1024 * 1024
        size = p.stat().st_size
        if size > limit:
            raise InputError(f"the file is {size / 1048576:.1f} MB; the limit is {self.settings.max_upload_mb:g} MB")
        image = load_image(p.read_bytes(), self.settings.max_pixels)  # bytes: messages say "image", not a temp path
        label = f"upload {name or p.name}"[:60]
        version = self.store.add_version(session.id, image, "upload", label, parent_id=session.head)
        return version, upload_notes(p)

    def head(self, session_id: str, owner: str | None) -> tuple[Version | None, np.ndarray | None]:
        session = self.store.session(session_id, owner)
        if session.head is None:
            return None, None
        v = self.store.version(session.id, session.head)
        return v, self.store.load_image(v)

    def before_after(self, session_id: str, owner: str | None) -> tuple[np.ndarray, np.ndarray] | None:
        """(image before the current version's turn, current image), or None without history."""
        v, img = self.head(session_id, owner)
        if v is None or img is None:
            return None
        base = self._undo_target(v)
        before = self.store.load_image(self.store.version(session_id, base)) if base is not None else img
        if before.shape != img.shape:
            before = img
        return before, img

    # ------------------------------------------------------------------------------------------------ planning

    def _client(self) -> Any:
        if not self._llm_checked:
            try:
                from costa.planner import llm_client_for

                self._llm = llm_client_for(self.settings)
            except ImportError:
                self._llm = None
            self._llm_checked = True
        return self._llm

    def uses_llm(self) -> bool:
        return bool(self.settings.openai_base_url or (self.settings.openai_api_key and self.settings.llm_model))

    def plan(self, instruction: str, image: np.ndarray | None, history: Sequence[str] = ()) -> Iterator[Event]:
        """Plan through `costa.planner.plan_instruction` (LLM or rules), yielding its events; return a PlanResult."""
        return self._plan(instruction, image, history)

    def _plan(
        self, instruction: str, image: np.ndarray | None, history: Sequence[str]
    ) -> Generator[Event, None, PlanResult]:
        events: list[Event] = []
        try:
            from costa.planner import plan_instruction
        except ImportError:  # an older planner package: the rule planner alone
            from costa.planner import plan_with_rules

            if not instruction or not instruction.strip():
                raise InputError("type what to change, e.g. \"replace the text 'SALE' with 'OPEN'\"") from None
            plan = plan_with_rules(instruction)
            ev = PlanReady(plan)
            yield ev
            return PlanResult(plan if plan.subtasks else None, (ev,))
        client = self._client()
        ocr_text: tuple[str, ...] = ()
        if client is not None and image is not None:
            try:
                ocr_text = tuple(r.text for r in self.services.reader.read(image))
            except Exception as e:  # OCR context is a hint for the LLM; its failure must not stop planning
                log.warning("OCR for planner context failed: %s", e)
        gen = plan_instruction(
            self.settings,
            instruction,
            image,
            self.services.tables,
            ocr_text=ocr_text,
            history=tuple(history),
            client=client,
        )
        while True:
            try:
                ev = next(gen)
            except StopIteration as stop:
                plan = stop.value
                break
            events.append(ev)
            yield ev
        return PlanResult(plan if plan is not None and plan.subtasks else None, tuple(events))

    def layout(self, plan: Plan, region: UserRegion) -> tuple[GraphLayout, set[str], dict[str, str]]:
        """The drawable tool subgraph for `plan`, the subtasks that could run if the user pointed at their target, and
        why each subtask that cannot run here cannot."""
        from costa.agent import build_graph

        tg = build_graph(self.services, plan, region)  # grounders that cannot find a target are left out
        est = self.services.estimates
        layout = GraphLayout.from_tool_graph(tg, lambda n: est.get(n.tool, n.kind))
        pointing = {sid for sid in tg.unavailable if self.pointing_helps(plan.by_id(sid).kind)}
        return layout, pointing, dict(tg.unavailable)

    def pointing_helps(self, kind: str) -> bool:
        """Whether a subtask of `kind` has a ready tool path that starts from what the user points at."""
        tables = self.services.tables
        pointed = frozenset({"boxes", "masks", "points"})
        chains = subtask_chains(tables, kind, pointed, self.services.is_ready_fn())
        return any(set(tables.tools[c[0]].inputs) & pointed for c in chains)

    def _after_turn_pointing(self, view: TurnView, given: Sequence[str]) -> None:
        """A turn that failed to find its target without any pointing: ask the user to point (when that helps)."""
        if view.plan is None or given or view.status not in ("failed", "partial"):
            return
        for s in view.plan.subtasks:
            if s.id not in view.done_subtasks and self.pointing_helps(s.kind):
                view.needs_pointing.add(s.id)

    def predict(
        self, plan: Plan, region: UserRegion, alphas: Sequence[float], threshold: float | None = None
    ) -> list[tuple[float, tuple[tuple[str, str], ...], float, float]]:
        """The path the search tries first for each α: (α, ((subtask, tool), …), seconds, quality); [] if none.

        `threshold` is the step quality the search will require (default from settings), which ranks steps expected
        to fail it last, as the search does.
        """
        from costa.agent import build_graph
        from costa.graph import GOAL, START, step_key

        tg = build_graph(self.services, plan, region)
        if not tg.steps:
            return []
        est = self.services.estimates
        threshold = self.services.settings.threshold if threshold is None else float(threshold)
        out = []
        for a in alphas:
            check_alpha(a)
            # the search's own threshold and step identity, so the predicted path is the one it tries first
            path, seconds, quality = predict_best(
                tg.graph, START, GOAL, lambda n: est.get(n.tool, n.kind), a, threshold, key=step_key
            )
            if path:
                out.append((a, tuple((n.subtask_id, n.tool) for n in path), seconds, quality))
        return out

    # --------------------------------------------------------------------------------------------------- turns

    def run(
        self,
        session_id: str,
        owner: str | None,
        instruction: str,
        alpha: float | None = None,
        threshold: float | None = None,
        clicks: Sequence[tuple[int, int]] = (),
        box: str = "",
        mode: str = "lazy",
        cached: PlanResult | None = None,
        brush: Mask | None = None,
        reflect: bool | None = None,
    ) -> Iterator[tuple[TurnView, Event | None]]:
        """Run one turn on the session's current image, yielding (view, event) as it goes; last event is None.

        `brush` is a painted mask of the current image's size (see `costa.pointing.brush_mask`). `reflect` switches
        multi-expert reflection on or off for this turn (default: COSTA_REFLECT).

        Raises:
            InputError: unknown session, no image yet, a turn already running, bad α/threshold/box/clicks/brush.
        """
        session = self.store.session(session_id, owner)
        alpha = self.settings.alpha if alpha is None else float(alpha)
        threshold = self.settings.threshold if threshold is None else float(threshold)
        check_alpha(alpha)
        if not 0.0 <= threshold <= 1.0:
            raise InputError(f"threshold must be in [0, 1], got {threshold}")
        if mode not in MODES:
            raise InputError(f"mode must be one of {sorted(MODES)}, got {mode!r}")
        if not isinstance(instruction, str) or not instruction.strip():
            raise InputError("type what to change, e.g. \"replace the text 'SALE' with 'OPEN'\"")
        rt = self.runtime(session.id)
        if not rt.lock.acquire(blocking=False):
            raise InputError("a turn is already running in this session: wait for it to finish or press Stop")
        try:
            yield from self._run_locked(
                session,
                rt,
                instruction.strip(),
                alpha,
                threshold,
                list(clicks),
                box or "",
                mode,
                cached,
                brush,
                reflect,
            )
        finally:
            rt.lock.release()

    def _run_locked(
        self,
        session: Session,
        rt: SessionRuntime,
        instruction: str,
        alpha: float,
        threshold: float,
        clicks: list[tuple[int, int]],
        box: str,
        mode: str,
        cached: PlanResult | None,
        brush: Mask | None = None,
        reflect: bool | None = None,
    ) -> Iterator[tuple[TurnView, Event | None]]:
        from costa.reflect.report import chat_note
        from costa.reflect.session import load_session_memory, remember_turn

        rt.stop.clear()
        if session.head is None:
            raise InputError("upload an image first")
        head = self.store.version(session.id, session.head)
        image = self.store.load_image(head)
        region = region_from_pointing(image, clicks, box, brush)
        view = TurnView(instruction, self.names, threshold, region_note=describe_region(region), reads=self.reads)
        memory = load_session_memory(self.store, session.id)  # earlier turns: protected regions, references
        resolved = memory.resolve(instruction)
        if resolved.box is not None and not region.artifacts():
            region = UserRegion(boxes=(resolved.box,))  # "make it red" acts where the turn it refers to did
        history = (
            memory.summary_lines(HISTORY_TURNS)
            or [t.instruction for t in self.store.turns(session.id)][-HISTORY_TURNS:]
        )
        params = {"alpha": alpha, "threshold": threshold, "mode": mode, "clicks": clicks, "box": box}
        if brush is not None:
            params["brush_px"] = brush.area
        params["given"] = sorted(region.artifacts())
        params["region_note"] = view.region_note
        turn_id = self.store.start_turn(session.id, head.id, instruction, None, params)
        view.turn_id = turn_id
        events: list[Event] = []
        plan: Plan | None = None
        result_version: int | None = None
        status = "failed"
        try:
            yield view, None
            if resolved.changed:
                view.notes.append(f"Read as “{resolved.text}” ({resolved.note}).")
            if cached is not None and not resolved.changed:
                planned = cached
                for ev in cached.events:
                    events.append(ev)
                    view.apply(ev)
            else:
                planned = yield from self._fold(self._plan(resolved.text, image, history), view, events)
            plan = planned.plan if planned.plan is not None else view.plan
            if planned.plan is not None:
                view.layout, view.needs_pointing, _ = self.layout(planned.plan, region)
                yield view, None
                if mode == "fast-slow" and self._fast_slow is None:
                    from costa.subroutines.executor import FastSlowRuntime

                    self._fast_slow = FastSlowRuntime.from_services(self.services, self.store)
                runtime = self._fast_slow if mode == "fast-slow" else None
                control = TurnControl(stop=rt.stop)  # Stop also interrupts a diffusion call between its steps
                turn = pointing_first(self.services, planned.plan, region) or run_turn(  # ask before running
                    self.services,
                    image,
                    planned.plan,
                    alpha,
                    threshold,
                    region,
                    mode=mode,
                    runtime=runtime,
                    reflect=reflect,
                    memory=memory,
                    control=control,
                )
                for ev in turn:
                    if isinstance(ev, PlanReady):
                        continue  # the planner already announced the plan
                    events.append(ev)
                    view.apply(ev)
                    if (note := chat_note(ev)) is not None:
                        view.notes.append(note)  # reflection retries and best-of choices, said in the chat
                    yield view, ev
                    if rt.stop.is_set():
                        turn.close()
                        view.stop()
                        break
            if (
                view.outcome is not None
                and view.outcome.image is not None
                and view.status not in ("stopped", "unverified")
            ):
                result_version = self._save_versions(session.id, head, turn_id, instruction, view)
                view.result_version = result_version
            self._after_turn_pointing(view, params["given"])
            if planned.plan is not None and view.outcome is not None:
                box0 = region.boxes[0] if region.boxes else None
                remember_turn(
                    self.store, session.id, turn_id, instruction, resolved.text, planned.plan, image, events, box0
                )
            status = view.status if view.status in ("done", "partial", "unverified", "stopped") else "failed"
        except GeneratorExit:
            status = "stopped"
            view.stop()
            raise
        finally:
            summary = {**view.totals(), "ok": bool(view.outcome and view.outcome.ok)}
            if view.outcome is not None:
                summary["results"] = dict(view.outcome.results)
                summary["skipped"] = dict(view.outcome.skipped)
                summary["unverified"] = dict(view.outcome.unverified)
            if view.path is not None:
                summary["path"] = [list(p) for p in view.path.path]
            record_targets(self.store, turn_id, events)
            self.store.finish_turn(
                turn_id,
                status,  # type: ignore[arg-type]
                [event_to_dict(e) for e in events],
                summary,
                result_version,
                plan.model_dump(mode="json") if plan is not None else None,
            )
        view.status = status
        yield view, None

    def _fold(
        self, gen: Generator[Event, None, PlanResult], view: TurnView, events: list[Event]
    ) -> Generator[tuple[TurnView, Event | None], None, PlanResult]:
        while True:
            try:
                ev = next(gen)
            except StopIteration as stop:
                return stop.value
            events.append(ev)
            view.apply(ev)
            yield view, ev

    def _save_versions(self, session_id: str, head: Version, turn_id: int, instruction: str, view: TurnView) -> int:
        """Store each accepted subtask's image, then the turn's result as the new current version."""
        assert view.outcome is not None and view.outcome.image is not None
        final = view.outcome.image
        parent = head.id
        edits = [d for d in view.done_subtasks.values() if d.image is not None]
        for d in edits:
            if d is edits[-1] and np.array_equal(d.image, final):
                break
            name = self.names.get(d.subtask_kind, d.subtask_kind)
            v = self.store.add_version(
                session_id, d.image, "subtask", f"{d.subtask_id} {name}", parent, turn_id, d.subtask_id, False
            )
            parent = v.id
        label = f"turn {turn_id}: {instruction}"[:60]
        return self.store.add_version(session_id, final, "turn", label, parent, turn_id).id

    def stop(self, session_id: str, owner: str | None) -> bool:
        """Ask the session's running turn to stop after the current tool call; False when none is running."""
        self.store.session(session_id, owner)
        rt = self.runtime(session_id)
        if not rt.lock.locked():
            return False
        rt.stop.set()
        return True

    # ------------------------------------------------------------------------------------------------- history

    def _undo_target(self, v: Version) -> int | None:
        if v.kind == "turn" and v.turn_id is not None:
            return self.store.turn(v.session_id, v.turn_id).base_version
        return v.parent_id

    def undo(self, session_id: str, owner: str | None) -> Version:
        """Go back to the version before the current one's turn (or upload); redo can return."""
        session = self.store.session(session_id, owner)
        if session.head is None:
            raise InputError("nothing to undo: there is no image yet")
        if self.busy(session_id):
            raise InputError("a turn is running: wait for it or press Stop before undoing")
        target = self._undo_target(self.store.version(session_id, session.head))
        if target is None:
            raise InputError("nothing to undo: this is the first version")
        self.store.set_head(session_id, target, (*session.redo, session.head))
        return self.store.version(session_id, target)

    def redo(self, session_id: str, owner: str | None) -> Version:
        session = self.store.session(session_id, owner)
        if not session.redo:
            raise InputError("nothing to redo")
        if self.busy(session_id):
            raise InputError("a turn is running: wait for it or press Stop before redoing")
        *rest, target = session.redo
        self.store.set_head(session_id, target, rest)
        return self.store.version(session_id, target)

    def branch(self, session_id: str, owner: str | None, version_id: int) -> Version:
        """Make any version current; the next edit starts a new branch and the old future is kept."""
        session = self.store.session(session_id, owner)
        if self.busy(session_id):
            raise InputError("a turn is running: wait for it or press Stop before switching versions")
        try:
            vid = int(version_id)
        except (TypeError, ValueError) as e:
            raise InputError(f"version id must be a whole number, got {version_id!r}") from e
        v = self.store.version(session.id, vid)
        self.store.set_head(session.id, v.id, ())
        return v

    def history(self, session_id: str, owner: str | None) -> dict[str, Any]:
        """The session's versions and turns as JSON-ready data."""
        session = self.store.session(session_id, owner)
        versions = self.store.versions(session.id)
        turns = self.store.turns(session.id)
        head = self.store.version(session.id, session.head) if session.head is not None else None
        return {
            "session_id": session.id,
            "head": session.head,
            "can_undo": head is not None and self._undo_target(head) is not None,
            "can_redo": bool(session.redo),
            "versions": [v.summary() for v in versions],
            "turns": [
                {
                    "id": t.id,
                    "instruction": t.instruction,
                    "status": t.status,
                    "base_version": t.base_version,
                    "result_version": t.result_version,
                    "subtasks": [s["id"] for s in (t.plan or {}).get("subtasks", [])],
                    "seconds": t.summary.get("seconds"),
                    "tool_seconds": t.summary.get("tool_seconds"),
                }
                for t in turns
            ],
        }

    def turn_views(self, session_id: str, owner: str | None, last: int = 20) -> list[TurnView]:
        """Stored turns rebuilt as views (the chat and diagrams after a page refresh)."""
        session = self.store.session(session_id, owner)
        return [self.view_of(t) for t in self.store.turns(session.id)[-last:]]

    def view_of(self, turn: Turn) -> TurnView:
        p = turn.params
        view = TurnView(
            turn.instruction,
            self.names,
            float(p.get("threshold", self.settings.threshold)),
            turn_id=turn.id,
            region_note=p.get("region_note", ""),
            reads=self.reads,
        )
        if turn.plan:
            plan = Plan.model_validate(turn.plan)
            view.plan = plan
            given = frozenset(p.get("given", ()))
            ready = self.services.is_ready_fn()
            tg = build_plan_graph(self.services.tables, plan, ready, {s.id: given for s in plan.subtasks})
            est = self.services.estimates
            view.layout = GraphLayout.from_tool_graph(tg, lambda n: est.get(n.tool, n.kind))
            view.needs_pointing = {sid for sid in tg.unavailable if self.pointing_helps(plan.by_id(sid).kind)}
        for d in turn.events:
            ev = event_from_dict(d)
            if ev is not None:
                view.apply(ev)
        view.status = "failed" if turn.status == "running" else turn.status
        view.result_version = turn.result_version
        self._after_turn_pointing(view, p.get("given", ()))
        return view

    def session_totals(self, session_id: str) -> list[dict[str, Any]]:
        return [t.summary for t in self.store.turns(session_id)]

    # -------------------------------------------------------------------------------------------------- scores

    def score(
        self,
        session_id: str,
        owner: str | None,
        turn_id: int,
        subtask_id: str,
        score: float,
        comment: str = "",
        evaluator: str = "",
    ) -> dict[str, Any]:
        """Record a subtask score; return the session's accuracies."""
        session = self.store.session(session_id, owner)
        self.store.save_score(session.id, turn_id, subtask_id, score, comment, owner or evaluator)
        return self.accuracy(session.id, owner)

    def accuracy(self, session_id: str, owner: str | None) -> dict[str, Any]:
        session = self.store.session(session_id, owner)
        scores = self.store.scores(session.id)
        tasks, overall = accuracy(scores)
        return {
            "tasks": {str(k): v for k, v in tasks.items()},
            "overall": overall,
            "scores": [
                {
                    "turn_id": s.turn_id,
                    "subtask_id": s.subtask_id,
                    "score": s.score,
                    "comment": s.comment,
                    "evaluator": s.evaluator,
                }
                for s in scores
            ],
        }

    def scores_csv(self, session_id: str, owner: str | None) -> Path:
        from costa.bundle import scores_csv

        session = self.store.session(session_id, owner)
        path = self.tmp_dir(session.id) / f"costa-scores-{session.id[:8]}.csv"
        path.write_text(scores_csv(self.store, session.id), encoding="utf-8")
        return path

    # -------------------------------------------------------------------------------------------------- export

    def export(self, session_id: str, owner: str | None) -> tuple[Path | None, Path]:
        """Write the current image (PNG) and the reproducibility bundle (zip) to the session's temp folder."""
        from costa.bundle import write_bundle

        session = self.store.session(session_id, owner)
        tmp = self.tmp_dir(session.id)
        image_path: Path | None = None
        if session.head is not None:
            v = self.store.version(session.id, session.head)
            image_path = tmp / f"costa-v{v.id}.png"
            shutil.copyfile(v.file, image_path)
        bundle = write_bundle(
            self.store, session, self.services.tables, self.settings, tmp / f"costa-session-{session.id[:8]}.zip"
        )
        return image_path, bundle


def upload_notes(path: Path) -> list[str]:
    """What the user should know about how an accepted file was read (it has already passed `load_image`)."""
    from PIL import Image

    notes = []
    with Image.open(path) as img:
        if getattr(img, "is_animated", False):
            frames = getattr(img, "n_frames", "?")
            notes.append(f"The image is animated ({frames} frames): costa edits its first frame.")
        if img.mode == "CMYK":
            notes.append("The image is CMYK: it was converted to RGB for editing.")
        elif img.mode in ("I;16", "I;16B", "I;16L", "I"):
            notes.append("The image has 16 bits per channel: it was scaled to 8 bits for editing.")
        elif img.mode in ("RGBA", "LA", "PA"):
            notes.append("The image has transparency: it was flattened onto white for editing.")
    return notes


def report(view: TurnView, session_id: str) -> dict[str, Any]:
    """A turn as JSON-ready data for API clients."""
    from ui.render import final_text, log_lines

    plan = view.plan
    return {
        "session_id": session_id,
        "turn_id": view.turn_id,
        "status": view.status,
        "ok": bool(view.outcome and view.outcome.ok),
        "version_id": view.result_version,
        "region": view.region_note,
        "plan": plan.model_dump(mode="json") if plan is not None else None,
        "subtasks": [
            {
                "id": s.id,
                "kind": s.kind,
                "state": view.subtask_state(s.id),
                "tools": list(view.done_subtasks[s.id].tools) if s.id in view.done_subtasks else [],
                "quality": view.done_subtasks[s.id].quality if s.id in view.done_subtasks else None,
                "result": view.done_subtasks[s.id].result if s.id in view.done_subtasks else "",
                "why_not": view.unavailable.get(s.id, ""),
                "needs_pointing": s.id in view.needs_pointing,
            }
            for s in (plan.subtasks if plan else ())
        ],
        "calls": [
            {
                "subtask_id": c.subtask_id,
                "tool": c.tool,
                "attempt": c.attempt,
                "seconds": c.seconds,
                "quality": c.quality,
                "passed": c.passed,
                "reasons": list(c.reasons),
            }
            for c in view.calls
        ],
        "totals": view.totals(),
        "targets": targets_report(view),
        "message": final_text(view),
        "log": log_lines(view),
    }


def is_tool_event(ev: Event | None) -> bool:
    """Events worth a screen update: tool calls and milestones (not every queue push)."""
    from costa import events as E

    return ev is None or isinstance(
        ev,
        ToolStarted
        | ToolFinished
        | E.Retry
        | E.ToolFailed
        | E.PathChosen
        | E.SubtaskDone
        | TurnDone
        | ErrorEvent
        | E.SubgraphBuilt
        | E.PlanReady
        | E.LlmCall
        | E.ClarificationNeeded
        | E.PlannerFallback
        | E.SearchFailed,
    )
