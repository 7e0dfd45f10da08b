"""The session core every interface uses (page, API, CLI, benchmarks): sessions, uploads, turns, Stop.

One `SessionCore` is made per process (by `ui.app.build_ui`, the CLI, a benchmark; never at import). It owns the
store and the per-session runtimes. Every call names a session id and the caller (`owner`, the signed-in user or
None); the store refuses ids that do not exist or belong to someone else.

A turn is two steps: `prepare` validates everything the request carries (options, clicks, box, brush, the upload)
and raises `InputError` before anything is written; `run` first hands a history command in words, a "change it back"
or a question to `costa.session.conversation`, else takes the session's lock (refusing a second turn) and runs the
turn's steps (`costa.session.run.TurnRun`: store the upload, plan, act, save, remember, record). The core holds its
parts as objects: `versions` (history, undo/redo/branch, stored views, scores, exports: `costa.session.history`),
`previews` (the α preview: `costa.session.preview`), `proposals` (a pending result costa cannot vouch for, Accept /
Discard: `costa.session.proposals`), `operations` (subtask kinds the session carries out itself
instead of searching tools: the place a planned history operation is executed, `TurnRun.act`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from costa.budget import check_turn_pixels, turn_budget
from costa.bundle import export_name
from costa.errors import InputError
from costa.events import Event
from costa.images import load_image
from costa.pointing import region_from_pointing
from costa.services import Services
from costa.session.history import SessionHistory
from costa.session.preview import Previews
from costa.session.proposals import SessionProposals
from costa.session.replicas import replica_turn, stop_elsewhere
from costa.session.run import Operation, TurnRun
from costa.session.runtime import STOPPED_BY_LEFT, STOPPED_BY_STOP, Runtimes, SessionRuntime
from costa.session.turns import PlanResult, TurnOptions, Vocabulary, check_instruction, llm_client, region_warnings
from costa.session.verdicts import VerdictFlow
from costa.session.view import TurnView
from costa.store import Session, SourceFile, Store, Version
from costa.turn.records import UserRegion
from costa.types import Mask, Point

log = logging.getLogger(__name__)

BUSY = "a turn is already running in this session: wait for it to finish or press Stop"
#: An undo, redo, branch or upload while a turn runs (the turn would save over it).
TURN_RUNNING = "a turn is running in this session: undo, redo, branch and uploads wait for it to finish (or press Stop)"
#: Seconds a history write waits for another one (undo / redo / branch hold it for milliseconds).
HISTORY_WAIT_S = 10.0


@dataclass(frozen=True, eq=False)
class Upload:
    """An uploaded file, already read and checked (not yet stored)."""

    image: np.ndarray
    label: str
    notes: tuple[str, ...]
    source: SourceFile | None = None  # the file's bytes: stored as they are when they decode to exactly `image`


@dataclass(frozen=True, eq=False)
class Pointing:
    """Where the user pointed for a turn: `clicks` on the target (one: the region around it; two or more: their box),
    `negatives` on the background, a `box` as typed ("x1,y1,x2,y2"; "" for none) and a `brush` mask."""

    clicks: Sequence[tuple[int, int]] = ()
    box: str = ""
    brush: Mask | None = None
    negatives: Sequence[tuple[int, int]] = ()


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


class SessionCore:
    """Sessions, uploads and turns over one `Store` and one `Services`; history and previews as parts it holds.

    `fast_slow`: FaSTA*'s runtime for fast-slow turns (default: opened on this core's store on the first such turn;
    the CLI passes one on COSTA_HOME's store so its runs add up across processes even when the session is a
    throwaway one)."""

    def __init__(self, services: Services, store: Store | None = None, fast_slow: Any = None) -> None:
        self.services = services
        self.settings = services.settings
        self.store = store or Store.from_settings(self.settings)  # quotas, COSTA_DATABASE_URL
        self.runtimes = Runtimes(self.settings.home, self.settings.tmp_idle_seconds)
        self.vocabulary = Vocabulary.from_tables(services.tables)
        self.previews = Previews(services, self.store, self.vocabulary, self.client)
        self.versions = SessionHistory(self.store, services, self.previews, self.runtimes, self.writing)
        #: The pending proposal of each session (a result costa cannot vouch for) and the person's Accept / Discard.
        self.proposals = SessionProposals(self.store, self.writing, VerdictFlow(services, lambda: self._fast_slow))
        #: Subtask kinds the session carries out itself (kind → handler), not by searching tools (`TurnRun.act`).
        self.operations: dict[str, Operation] = {}
        self._client: Any = None
        self._client_checked = False
        self._client_lock = threading.Lock()
        self._thumbs: dict[int, np.ndarray] = {}
        self._thumb_lock = threading.Lock()
        self._fast_slow: Any = fast_slow  # costa.subroutines.runtime.FastSlowRuntime, made on the first fast-slow turn
        self._fast_slow_lock = threading.Lock()

    @property
    def names(self) -> Mapping[str, str]:
        return self.vocabulary.names

    @property
    def reads(self) -> frozenset[str]:
        return self.vocabulary.reads

    @property
    def unreferenced(self) -> frozenset[str]:
        return self.vocabulary.unreferenced

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

    def used(self, session_id: str, owner: str | None) -> bool:
        """Whether the session has any history: a version, or a turn (one that kept nothing counts too)."""
        session = self.store.session(session_id, owner)
        return session.head is not None or bool(self.store.turns(session.id))

    def runtime(self, session_id: str) -> SessionRuntime:
        return self.runtimes.get(session_id)

    def busy(self, session_id: str) -> bool:
        """Whether a turn of the session runs, in this process or (on a shared database) another replica."""
        return self.runtimes.busy(session_id) or self.store.db.turn_held(session_id)

    @contextmanager
    def writing(self, session_id: str) -> Iterator[SessionRuntime]:
        """Hold the session's history lock for a short write (upload, undo, branch): another such write is waited
        for, a running turn refuses it (`TURN_RUNNING`); an edit is never refused because of it."""
        rt = self.runtime(session_id)
        if not rt.history.acquire(timeout=HISTORY_WAIT_S):
            raise InputError("another undo, redo or branch of this session is being saved: try again")
        try:
            if rt.running or self.store.db.turn_held(session_id):  # here, or on another replica
                raise InputError(TURN_RUNNING)
            yield rt
        finally:
            rt.history.release()

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
        """Read and check an uploaded file without storing it (size, format, pixels, the per-turn pixel budget,
        conversions): the page holds it until a turn keeps it (`prepare(..., upload=...)`), the API sends it with its
        turn."""
        p = Path(path)
        if not p.is_file():
            raise InputError("the upload did not arrive: try again")
        limit = self.settings.max_upload_mb * 1024 * 1024
        size = p.stat().st_size
        if size > limit:
            raise InputError(f"the file is {size / 1048576:.1f} MB; the limit is {self.settings.max_upload_mb:g} MB")
        data = p.read_bytes()
        image = load_image(data, self.settings.max_pixels)  # bytes: messages say "image", not a temp path
        h, w = image.shape[:2]
        check_turn_pixels(turn_budget(self.settings, h * w), w, h)  # an image no turn could edit is refused now
        return Upload(image, f"upload {name or p.name}"[:60], tuple(upload_notes(p)), source_file(data))

    def upload(self, session_id: str, owner: str | None, path: str | Path, name: str = "") -> tuple[Version, list[str]]:
        """Validate an uploaded file and store it as the current version at once (undo returns to the previous one):
        for tests and scripts; the page and the API keep an upload only when its turn does (`read_upload`)."""
        session = self.store.session(session_id, owner)
        up = self.read_upload(path, name)
        with self.writing(session.id):
            head = self.store.session(session.id, owner).head
            version = self.store.add_upload(session.id, up.image, up.label, up.source, head)
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
        pointing: Pointing | None = None,
        upload: Upload | None = None,
        cached: PlanResult | None = None,
    ) -> TurnRequest:
        """Check a whole turn request against the image it will edit; raise `InputError` before anything is stored.

        `pointing`: the clicks, box, brush and background clicks (`Pointing`; default: none); `upload`: an image that
        becomes the current version if the turn keeps it; `cached`: the plan already made for this instruction.
        """
        pointing = pointing or Pointing()
        clicks, box, brush, negatives = pointing.clicks, pointing.box, pointing.brush, pointing.negatives
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
        budget = turn_budget(self.settings, image.shape[0] * image.shape[1])
        check_turn_pixels(budget, image.shape[1], image.shape[0])
        region = region_from_pointing(image, list(clicks), box or "", brush)
        if negatives:
            neg = tuple(Point(int(x), int(y), positive=False) for x, y in negatives)
            region = UserRegion(region.boxes, region.masks, (*region.points, *neg))
        region.validate(image.shape[1], image.shape[0])
        return TurnRequest(
            session.id, owner, text, options, image, base, upload, region, tuple(clicks), box or "", brush, cached
        )

    def run(
        self, req: TurnRequest, on_progress: Callable[[Event], None] | None = None, tab: str | None = None
    ) -> Iterator[tuple[TurnView, Event | None]]:
        """Run a prepared turn, yielding (view, event) as it goes (event None for a redraw without a new event).

        `on_progress` receives `ToolProgress` events (diffusion steps, tools' LLM calls) as they happen, from inside
        the tool call; Stop interrupts such a call between its steps. `tab` is the browser connection that runs the
        turn (the page's): when that tab goes away the turn is stopped (`left`).

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
        try:
            rt.stop.clear()
            rt.stop_reason, rt.tab = "", tab
            # the database's lock too: another replica sharing the store refuses a second turn of this session
            with replica_turn(self.store, rt, req.session_id, BUSY):
                with rt.history:  # an undo being saved finishes first; later ones wait for the turn (`writing`)
                    rt.running = True
                try:
                    session = self.store.session(req.session_id, req.owner)
                    if req.base is not None and session.head != req.base.id:
                        raise InputError("the current image changed while this request waited: send it again")
                    yield from self._run_locked(session, rt, req, on_progress)
                finally:
                    rt.running = False
        finally:
            rt.lock.release()

    def _run_locked(
        self, session: Session, rt: SessionRuntime, req: TurnRequest, on_progress: Callable[[Event], None] | None
    ) -> Iterator[tuple[TurnView, Event | None]]:
        yield from TurnRun(self, session, rt, req, on_progress).steps()

    def stop(self, session_id: str, owner: str | None) -> bool:
        """Stop the session's running turn now; False when none is running.

        The turn ends as "stopped" within a fraction of a second even while a tool call runs (the call finishes in
        the background and its result is dropped, `costa.models.control.run_stoppable`); the image and history stay
        as they were before the turn."""
        self.store.session(session_id, owner)
        rt = self.runtime(session_id)
        if not rt.running:  # another replica sharing the store may run it: ask it through the database
            return stop_elsewhere(self.store, session_id, STOPPED_BY_STOP)
        rt.stop_reason = rt.stop_reason or STOPPED_BY_STOP
        rt.stop.set()
        return True

    def left(self, connection: str | None) -> list[str]:
        """A browser tab went away (closed or reloaded): stop the turns it started that still run (each ends
        "stopped", and says so when its session is shown again: `stopped_by` is `STOPPED_BY_LEFT`), and forget the
        tab. A turn another tab started keeps running. Returns the sessions whose turn was stopped."""
        if not connection:
            return []
        stopped = self.runtimes.started_by(connection)
        for sid in stopped:
            rt = self.runtime(sid)
            rt.stop_reason = rt.stop_reason or STOPPED_BY_LEFT
            rt.stop.set()
            log.info("the page that ran a turn went away: stopping it")
        self.runtimes.unbind(connection)
        return stopped


def source_file(data: bytes) -> SourceFile | None:
    """An upload's bytes and format, for the store to keep as they are when they decode to the same pixels."""
    import io

    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as img:
            return SourceFile(data, str(img.format or ""))
    except (OSError, ValueError):
        return None


def upload_notes(path: Path) -> list[str]:
    """What the user should know about how an accepted file was read (it has already passed `load_image`)."""
    from PIL import Image

    from costa.images import sample_note

    data = path.read_bytes()
    notes = [n] if (n := sample_note(data)) else []
    try:
        img = Image.open(path)
    except (OSError, ValueError):  # a TIFF only tifffile reads: its note is the samples'
        return notes
    with img:
        if getattr(img, "is_animated", False):
            frames = getattr(img, "n_frames", "?")
            notes.append(f"The image is animated ({frames} frames): costa edits its first frame.")
        if img.mode == "CMYK":
            notes.append("The image is CMYK: it was converted to RGB for editing.")
        elif img.mode in ("RGBA", "LA", "PA"):
            notes.append("The image has transparency: it was flattened onto white for editing.")
    return notes
