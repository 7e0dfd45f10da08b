"""The session core every interface uses (page, API, CLI, benchmarks): sessions, uploads, turns, Stop.

One `SessionCore` is made per process (by `ui.app.build_ui`, the CLI, a benchmark; never at import). It owns the
store and the per-session runtimes. Every call names a session id and the caller (`owner`, the signed-in user or
None); the store refuses ids that do not exist or belong to someone else.

A turn is two steps: `prepare` validates everything the request carries (options, clicks, box, brush, the upload)
and raises `InputError` before anything is written; `run` takes the session's lock (refusing a second turn), stores
the upload, plans with OCR text and history, builds the tool graph once, searches, and saves the result. History,
scores and exports are in `costa.session.history` (mixed in here), α previews in `costa.session.preview`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from costa.agent import TurnEnv, run_turn
from costa.bundle import export_name
from costa.errors import InputError
from costa.eventlog import event_to_dict
from costa.events import Event, LlmCall, PlanReady
from costa.images import load_image
from costa.messages import plain_reasons
from costa.models.control import ToolStoppedError, TurnControl, run_stoppable
from costa.pointing import describe_region, region_from_pointing
from costa.reflect.report import chat_note
from costa.reflect.session import remember_turn
from costa.services import Services
from costa.session.conversation import path_memory
from costa.session.history import HistoryMixin
from costa.session.preview import PreviewMixin
from costa.session.runtime import Runtimes, SessionRuntime
from costa.session.targets import pointing_first, record_targets, target_panels
from costa.session.turns import (
    HISTORY_TURNS,
    PlanResult,
    TurnOptions,
    check_instruction,
    llm_client,
    plan_turn,
    region_warnings,
)
from costa.session.view import GraphLayout, TurnView
from costa.store import Session, Store, Version
from costa.turn.graphs import build_graph
from costa.turn.records import TurnConfig, UserRegion
from costa.types import Mask, Point

log = logging.getLogger(__name__)

BUSY = "a turn is already running in this session: wait for it to finish or press Stop"


@dataclass(frozen=True, eq=False)
class Upload:
    """An uploaded file, already read and checked (not yet stored)."""

    image: np.ndarray
    label: str
    notes: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class TurnRequest:
    """A validated turn: nothing in it can be refused any more except by a turn already running or a moved head."""

    session_id: str
    owner: str | None
    instruction: str
    options: TurnOptions
    image: np.ndarray
    base: Version | None  # the current version the turn edits (None: the upload becomes it)
    upload: Upload | None
    region: UserRegion
    clicks: tuple[tuple[int, int], ...] = ()
    box: str = ""
    brush: Mask | None = None
    cached: PlanResult | None = None

    @property
    def notes(self) -> tuple[str, ...]:
        """Conversion notes for the upload and warnings about the region, for the user."""
        return (*(self.upload.notes if self.upload else ()), *region_warnings(self.region))


class SessionCore(HistoryMixin, PreviewMixin):
    """Sessions, turns, history, scores and exports over one `Store` and one `Services`."""

    def __init__(self, services: Services, store: Store | None = None) -> None:
        self.services = services
        self.settings = services.settings
        self.store = store or Store.from_settings(self.settings)  # quotas, COSTA_DATABASE_URL
        self.runtimes = Runtimes(self.settings.home, self.settings.tmp_idle_seconds)
        self.names = {k: v.name for k, v in services.tables.subtasks.items()}
        self.reads = frozenset(k for k, v in services.tables.subtasks.items() if not v.edits_image)
        self.unreferenced = frozenset(k for k, v in services.tables.subtasks.items() if v.unreferenced)
        self._client: Any = None
        self._client_checked = False
        self._client_lock = threading.Lock()
        self._thumbs: dict[int, np.ndarray] = {}
        self._thumb_lock = threading.Lock()
        self._exports: dict[str, str | None] = {}  # exported file name -> the user who exported it
        self._fast_slow: Any = None  # costa.subroutines.executor.FastSlowRuntime, built on the first fast-slow turn
        self._fast_slow_lock = threading.Lock()

    def start(self) -> dict[str, int]:
        """Recover from a killed process (call once when an app starts): running turns → interrupted, files a killed
        write left removed and unknown ones quarantined (`Store.recover`), idle temporary files expiring in the
        background. Returns what was recovered."""
        recovered = {"interrupted": self.store.mark_interrupted(), **self.store.recover()}
        if any(recovered.values()):
            log.warning("recovered after an unclean stop: %s", recovered)
        self.runtimes.start_reaper(hourly=self.expire_sessions)
        self.expire_sessions()
        return recovered

    def expire_sessions(self) -> None:
        """Delete sessions idle past COSTA_RETENTION_DAYS (at most hourly across every process sharing the store)."""
        from costa.store.retention import gc

        report = gc(self.store, self.settings.retention_days, periodic=True)
        if not report.skipped and (report.expired or report.empty):
            log.warning("%s", report.line())

    def close(self) -> None:
        self.runtimes.close()

    def client(self) -> Any:
        """The LLM client for planning (None: the offline rule planner), made once."""
        with self._client_lock:
            if not self._client_checked:
                self._client = llm_client(self.services)
                self._client_checked = True
        return self._client

    def fast_slow(self) -> Any:
        """FaSTA*'s runtime (learned rules, observation log) for fast-slow turns, made once."""
        with self._fast_slow_lock:
            if self._fast_slow is None:
                from costa.subroutines.runtime import FastSlowRuntime

                self._fast_slow = FastSlowRuntime.from_services(self.services, self.store)
        return self._fast_slow

    def uses_llm(self) -> bool:
        s = self.settings
        return bool(s.openai_base_url or (s.openai_api_key and s.llm_model))

    # ------------------------------------------------------------------------------------------------ sessions

    def open_session(self, session_id: str | None, owner: str | None) -> Session:
        """The caller's session when `session_id` is theirs, else a new one."""
        if session_id:
            try:
                return self.store.session(session_id, owner)
            except InputError:
                log.info("session not found or not this user's; starting a new one")
        return self.store.create_session(owner)

    def new_session(self, owner: str | None) -> Session:
        return self.store.create_session(owner)

    def session(self, session_id: str, owner: str | None) -> Session:
        return self.store.session(session_id, owner)

    def runtime(self, session_id: str) -> SessionRuntime:
        return self.runtimes.get(session_id)

    def busy(self, session_id: str) -> bool:
        return self.runtimes.busy(session_id)

    @contextmanager
    def writing(self, session_id: str) -> Iterator[SessionRuntime]:
        """Hold the session's lock for a short write (upload, undo, branch); refuse while a turn runs."""
        rt = self.runtime(session_id)
        if not rt.lock.acquire(blocking=False):
            raise InputError(BUSY)
        try:
            yield rt
        finally:
            rt.lock.release()

    def choices(self, owner: str | None, known: Sequence[str], current: str) -> list[tuple[str, str]]:
        """(label, id) of the caller's sessions: those this browser knows and, when signed in, all of theirs."""
        ids = list(known) + ([s.id for s in self.store.sessions(owner)] if owner else [])
        out: list[tuple[str, str]] = []
        for sid in dict.fromkeys(ids):
            try:
                s = self.store.session(sid, owner)
            except InputError:
                continue
            n = len(self.store.turns(s.id))
            # the name exported files carry (costa-scores-<name>.csv, the bundle), so a file matches its session
            out.append((f"{export_name(s.id)} · {n} turn(s){' (this one)' if s.id == current else ''}", s.id))
        return out

    # -------------------------------------------------------------------------------------------------- images

    def read_upload(self, path: str | Path, name: str = "") -> Upload:
        """Read and check an uploaded file without storing it (size, format, pixels, conversions)."""
        p = Path(path)
        if not p.is_file():
            raise InputError("the upload did not arrive: try again")
        limit = self.settings.max_upload_mb * 1024 * 1024
        size = p.stat().st_size
        if size > limit:
            raise InputError(f"the file is {size / 1048576:.1f} MB; the limit is {self.settings.max_upload_mb:g} MB")
        image = load_image(p.read_bytes(), self.settings.max_pixels)  # bytes: messages say "image", not a temp path
        return Upload(image, f"upload {name or p.name}"[:60], tuple(upload_notes(p)))

    def upload(self, session_id: str, owner: str | None, path: str | Path, name: str = "") -> tuple[Version, list[str]]:
        """Validate an uploaded file and make it the current version (undo returns to the previous one)."""
        session = self.store.session(session_id, owner)
        up = self.read_upload(path, name)
        with self.writing(session.id):
            head = self.store.session(session.id, owner).head
            version = self.store.add_version(session.id, up.image, "upload", up.label, parent_id=head)
        return version, list(up.notes)

    def head(self, session_id: str, owner: str | None) -> tuple[Version | None, np.ndarray | None]:
        session = self.store.session(session_id, owner)
        if session.head is None:
            return None, None
        v = self.store.version(session.id, session.head)
        return v, self.store.load_image(v)

    def thumbnail(self, version: Version, side: int = 160) -> np.ndarray:
        """A cached gallery thumbnail (versions never change, so the cache needs no invalidation)."""
        with self._thumb_lock:
            thumb = self._thumbs.get(version.id)
        if thumb is None:
            from PIL import Image

            with Image.open(version.file) as opened:
                img = opened.convert("RGB")
                img.thumbnail((side, side))
                thumb = np.asarray(img)
            with self._thumb_lock:
                if len(self._thumbs) >= 512:
                    self._thumbs.pop(next(iter(self._thumbs)))
                self._thumbs[version.id] = thumb
        return thumb

    # --------------------------------------------------------------------------------------------------- turns

    def prepare(
        self,
        session_id: str,
        owner: str | None,
        instruction: Any,
        options: TurnOptions,
        clicks: Sequence[tuple[int, int]] = (),
        box: str = "",
        brush: Mask | None = None,
        upload: Upload | None = None,
        cached: PlanResult | None = None,
        negatives: Sequence[tuple[int, int]] = (),
    ) -> TurnRequest:
        """Check a whole turn request against the image it will edit; raise `InputError` before anything is stored.

        `clicks` are on the target (one: the region around it; two or more: their box), `negatives` on background.
        """
        session = self.store.session(session_id, owner)
        text = check_instruction(instruction)
        if self.busy(session.id):
            raise InputError(BUSY)
        base: Version | None = None
        if upload is not None:
            image = upload.image
        elif session.head is None:
            raise InputError("upload an image first")
        else:
            base = self.store.version(session.id, session.head)
            image = self.store.load_image(base)
        region = region_from_pointing(image, list(clicks), box or "", brush)
        if negatives:
            neg = tuple(Point(int(x), int(y), positive=False) for x, y in negatives)
            region = UserRegion(region.boxes, region.masks, (*region.points, *neg))
        region.validate(image.shape[1], image.shape[0])
        return TurnRequest(
            session.id, owner, text, options, image, base, upload, region, tuple(clicks), box or "", brush, cached
        )

    def run(
        self, req: TurnRequest, on_progress: Callable[[Event], None] | None = None
    ) -> Iterator[tuple[TurnView, Event | None]]:
        """Run a prepared turn, yielding (view, event) as it goes (event None for a redraw without a new event).

        `on_progress` receives `ToolProgress` events (diffusion steps, tools' LLM calls) as they happen, from inside
        the tool call; Stop interrupts such a call between its steps.

        Raises:
            InputError: a turn is already running in the session, or its current image changed since `prepare`.
        """
        from costa.session.conversation import conversation_turn

        special = conversation_turn(self, req)  # a history command in words, "change it back", or a question
        if special is not None:
            yield from special
            return
        rt = self.runtime(req.session_id)
        if not rt.lock.acquire(blocking=False):
            raise InputError(BUSY)
        rt.running = True
        try:
            session = self.store.session(req.session_id, req.owner)
            if req.base is not None and session.head != req.base.id:
                raise InputError("the current image changed while this request waited: send it again")
            rt.stop.clear()
            yield from self._run_locked(session, rt, req, on_progress)
        finally:
            rt.running = False
            rt.lock.release()

    def _run_locked(
        self,
        session: Session,
        rt: SessionRuntime,
        req: TurnRequest,
        on_progress: Callable[[Event], None] | None = None,
    ) -> Iterator[tuple[TurnView, Event | None]]:
        if req.upload is not None:
            head = self.store.add_version(session.id, req.image, "upload", req.upload.label, session.head)
        else:
            assert req.base is not None  # prepare() made sure there is a current version
            head = req.base
        opts = req.options
        turns = self.store.turns(session.id)
        number = len(turns) + 1
        view = TurnView(
            req.instruction,
            self.names,
            opts.threshold,
            region_note=describe_region(req.region),
            reads=self.reads,
            unreferenced=self.unreferenced,
        )
        view.notes.extend(req.notes)
        params: dict[str, Any] = {
            "alpha": opts.alpha,
            "threshold": opts.threshold,
            "mode": opts.mode,
            "clicks": [list(c) for c in req.clicks],
            "box": req.box,
            "given": sorted(req.region.artifacts()),
            "region_note": view.region_note,
            "number": number,
        }
        if opts.reflect is not None:
            params["reflect"] = opts.reflect
        if opts.accept_unverified:
            params["accept_unverified"] = True
        if opts.action:
            params["action"] = opts.action
        if req.brush is not None:
            params["brush_px"] = req.brush.area
            params["mask_file"] = self.store.save_mask(session.id, req.brush.data)
            b = req.brush.bbox()
            params["brush_box"] = None if b is None else [b.x, b.y, b.w, b.h]
        memory = path_memory(self.store, session)  # earlier turns on this version's path: regions, references
        resolved = memory.resolve(req.instruction)
        region = req.region
        if resolved.region is not None and resolved.region.any() and not region.artifacts():
            region = UserRegion(masks=(Mask(resolved.region, label="remembered region"),))  # "make it darker": there
        elif resolved.box is not None and not region.artifacts():
            region = UserRegion(boxes=(resolved.box,))  # "make it red" acts where the turn it refers to did
        turn_id = self.store.start_turn(session.id, head.id, req.instruction, None, params)
        view.turn_id, view.turn_number = turn_id, number
        events: list[Event] = []
        plan = None
        planned: PlanResult | None = None
        result_version: int | None = None
        status = "failed"

        def on_tool_event(ev: Event) -> None:  # from a tool's worker thread, while the turn waits on it
            if isinstance(ev, LlmCall):  # a tool's own endpoint request (API tools): the ledger and the record count it
                view.llm.append(ev)
                events.append(ev)
            if on_progress is not None:
                on_progress(ev)

        control = TurnControl(stop=rt.stop, on_event=on_tool_event)  # Stop also interrupts a diffusion call
        try:
            yield view, None
            if resolved.changed:
                view.notes.append(f"Read as “{resolved.text}” ({resolved.note}).")
            if req.cached is not None and not resolved.changed:
                planned = req.cached
                for ev in planned.events:
                    events.append(ev)
                    view.apply(ev)
            else:
                history = memory.summary_lines(HISTORY_TURNS) or [t.instruction for t in turns][-HISTORY_TURNS:]
                gen = plan_turn(self.services, self.client(), resolved.text, req.image, history)
                while True:
                    try:  # each step (the OCR read, an LLM request) in a worker: Stop does not wait for the endpoint
                        ev = run_stoppable(lambda: next(gen), control, "", "planner", 0, exclusive=False)
                    except StopIteration as stop:
                        planned = stop.value
                        break
                    events.append(ev)
                    view.apply(ev)
                    yield view, ev
            plan = planned.plan if planned.plan is not None else view.plan
            if planned.plan is not None:
                tg = build_graph(self.services, planned.plan, region)  # the turn's one tool graph
                view.layout = GraphLayout.from_tool_graph(tg, self._estimate)
                view.needs_pointing = self._pointing_subtasks(planned.plan, tg.unavailable)
                view.plain.update(
                    plain_reasons(self.services.tables, planned.plan, tg.unavailable, view.needs_pointing)
                )
                yield view, None
                runtime = self.fast_slow() if opts.mode == "fast-slow" else None
                # Ask for pointing before anything runs, unless the user chose "do the rest" (the CLI always does: the
                # subtasks that do not depend on the unfound target run, and it exits 3).
                ask = pointing_first(self.services, planned.plan, region) if opts.action != "rest" else None
                config = TurnConfig(opts.alpha, opts.threshold, opts.mode, opts.reflect, opts.accept_unverified)
                env = TurnEnv(memory, control, runtime)
                turn = ask or run_turn(self.services, req.image, planned.plan, config, region, tg, env)
                for ev in turn:
                    if isinstance(ev, PlanReady):
                        continue  # the planner already announced the plan
                    events.append(ev)
                    view.apply(ev)
                    if (note := chat_note(ev)) is not None:
                        view.notes.append(note)  # reflection retries and best-of choices, said in the chat
                    yield view, ev
                    if rt.stop.is_set():
                        close = getattr(turn, "close", None)
                        if close is not None:
                            close()
                        view.stop()
                        break
            if (
                view.outcome is not None
                and view.outcome.image is not None
                and view.status not in ("stopped", "unverified")
                # reflection doubts a target and asks the user to point: nothing is saved, so sending again after
                # pointing edits the image as it was (not the doubted attempt); accepting it saves it
                and (not view.ask_pointing or opts.accept_unverified)
            ):
                result_version = self._save_versions(session.id, head, number, req.instruction, view)
                view.result_version = result_version
            self._after_turn_pointing(view, params["given"])
            target_panels(view)
            if planned is not None and planned.plan is not None and view.outcome is not None:
                box0 = region.boxes[0] if region.boxes else None
                remember_turn(
                    self.store, session.id, turn_id, req.instruction, resolved.text, planned.plan, req.image, events,
                    box0,
                )  # fmt: skip
            status = view.status if view.status in ("done", "partial", "unverified", "stopped") else "failed"
        except ToolStoppedError:  # Stop pressed while planning's LLM call or reflection's experts ran
            status = "stopped"
            view.stop()
        except GeneratorExit:
            status = "stopped"
            view.stop()
            raise
        finally:
            summary: dict[str, Any] = {**view.totals(), "ok": bool(view.outcome and view.outcome.ok)}
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
        view.result_number = self.version_number(session.id, result_version)
        yield view, None

    def _save_versions(self, session_id: str, head: Version, number: int, instruction: str, view: TurnView) -> int:
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
                session_id, d.image, "subtask", f"{d.subtask_id} {name}", parent, view.turn_id, d.subtask_id, False
            )
            parent = v.id
        label = f"turn {number}: {instruction}"[:60]
        return self.store.add_version(session_id, final, "turn", label, parent, view.turn_id).id

    def stop(self, session_id: str, owner: str | None) -> bool:
        """Stop the session's running turn now; False when none is running.

        The turn ends as "stopped" within a fraction of a second even while a tool call runs (the call finishes in
        the background and its result is dropped, `costa.models.control.run_stoppable`); the image and history stay
        as they were before the turn."""
        self.store.session(session_id, owner)
        rt = self.runtime(session_id)
        if not rt.running:
            return False
        rt.stop.set()
        return True


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
