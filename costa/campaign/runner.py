"""`campaign run`: every pending item through the session core, at most N at once, resumable.

Resuming: an item's units and its `done` status commit together, so after a crash (kill -9, power) or Ctrl-C the
finished items are kept and the next `run` does the rest: items a dead run left `running` go back to `pending` (their
half-made sessions are abandoned), items that failed (our error, recorded with its message) are tried again. A lock
file under COSTA_HOME keeps two runs of one campaign from running at once (the OS releases it when a run dies); on
PostgreSQL an advisory lock does too, across machines (released with a dead run's connection).

Ctrl-C stops the running turns at once (`SessionCore.stop`), puts their items back to `pending`, and exits 130.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import threading
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from costa.campaign.db import CampaignDb
from costa.campaign.items import ItemStoppedError, owner_of, run_item
from costa.campaign.progress import ProgressBar
from costa.campaign.records import Campaign, Item
from costa.errors import CostaError, InputError

log = logging.getLogger(__name__)

#: Most items run at once (each runs its own turns; the tools share the machine).
MAX_WORKERS = 16


@dataclass
class RunSummary:
    done: int = 0
    failed: int = 0
    requeued: int = 0
    remaining: int = 0
    interrupted: bool = False
    recovered: int = 0


@contextlib.contextmanager
def run_lock(home: Path, name: str, database: Any = None) -> Iterator[None]:
    """Hold the campaign's run lock (a second `run` of the same campaign is refused while this one lives): a file
    lock in COSTA_HOME and, on a database with named locks (PostgreSQL's advisory locks), that lock too, so a `run`
    on another machine sharing the database is refused even where its COSTA_HOME mount does not share file locks."""
    busy = InputError(f"campaign {name!r} is already running in another process: wait for it or stop it")
    folder = Path(home) / "campaigns"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / f"{name}.lock"
    named = getattr(database, "named_lock", None)
    with open(path, "a+") as f, named(f"campaign-run:{name}") if named else contextlib.nullcontext(True) as got:
        if not got:
            raise busy
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise busy from None
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


class CampaignRun:
    """One `run` of a campaign: a bounded pool of workers over its pending items."""

    def __init__(self, core: Any, db: CampaignDb, campaign: Campaign, workers: int, out: TextIO) -> None:
        if not 1 <= workers <= MAX_WORKERS:
            raise InputError(f"--workers must be 1 … {MAX_WORKERS}, got {workers}")
        self.core, self.db, self.campaign, self.workers, self.out = core, db, campaign, workers, out
        self.stop = threading.Event()
        self.sessions: dict[str, str] = {}  # item id -> its session (for Ctrl-C)
        self.lock = threading.Lock()
        self.summary = RunSummary()

    def _one(self, item: Item) -> str:
        def started(session_id: str) -> None:
            with self.lock:
                self.sessions[item.id] = session_id
            self.db.start_item(item.id, session_id)

        try:
            outcome = run_item(self.core, self.campaign, item, self.stop, started)
        except ItemStoppedError:
            self.db.requeue_item(item.id)
            return "requeued"
        except CostaError as e:  # the task cannot be run as written: recorded, the others go on
            self.db.fail_item(item.id, str(e))
            return "failed"
        except Exception as e:  # a bug: recorded with its traceback in the log, the run goes on with the others
            log.exception("campaign item %s (task %s) failed", item.id, item.task_id)
            self.db.fail_item(item.id, f"internal error {type(e).__name__}: {e}")
            return "failed"
        finally:
            with self.lock:
                self.sessions.pop(item.id, None)
        self.db.finish_item(item.id, outcome.units, outcome.tool_seconds, outcome.turn_seconds)
        return "done"

    def _interrupt(self) -> None:
        self.stop.set()
        with self.lock:
            running = list(self.sessions.values())
        for sid in running:
            with contextlib.suppress(CostaError):
                self.core.stop(sid, owner_of(self.campaign.name))

    def run(self) -> RunSummary:
        """Run the pending (and failed) items; return what happened. Ctrl-C stops cleanly (see the module)."""
        name = self.campaign.name
        self.summary.recovered = self.db.reset_running(name)
        todo = self.db.items(name, ("pending", "failed"))
        total = len(self.db.items(name))
        finished = total - len(todo)
        bar = ProgressBar(total, finished, self.out)
        pending = list(todo)
        running: dict[Future[str], Item] = {}
        with ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="campaign") as pool:
            try:
                while pending or running:
                    while pending and len(running) < self.workers and not self.stop.is_set():
                        item = pending.pop(0)
                        running[pool.submit(self._one, item)] = item
                    finished_now, _ = wait(list(running), timeout=0.5, return_when=FIRST_COMPLETED)
                    for fut in finished_now:
                        self._count(fut.result(), running.pop(fut), bar)
                    bar.draw()
                    if self.stop.is_set() and not running:
                        break
            except KeyboardInterrupt:
                self.summary.interrupted = True
                bar.note("stopping: the running turns end now; finished items are kept")
                self._interrupt()
                for fut in list(running):
                    self._count(fut.result(), running.pop(fut), bar)
        bar.finish()
        self.summary.remaining = len(self.db.items(name, ("pending", "failed", "running")))
        return self.summary

    def _count(self, outcome: str, item: Item, bar: ProgressBar) -> None:
        if outcome == "done":
            self.summary.done += 1
            bar.advance()
        elif outcome == "failed":
            self.summary.failed += 1
            bar.advance(failed=True)
            bar.note(f"task {item.task_id} ({item.condition.label}) failed: {self.db.item(item.id).error}")
        else:
            self.summary.requeued += 1


def run_campaign(core: Any, db: CampaignDb, name: str, workers: int, out: TextIO) -> RunSummary:
    """Run campaign `name` under its lock (see `CampaignRun`)."""
    campaign = db.campaign(name)
    with run_lock(core.settings.home, name, core.store.db):
        started = time.perf_counter()
        summary = CampaignRun(core, db, campaign, workers, out).run()
        log.info("campaign %s: run took %.1f s", name, time.perf_counter() - started)
        return summary
