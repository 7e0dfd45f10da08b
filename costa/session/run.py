"""One prepared turn under its session's lock, as steps a reader can follow (`TurnRun.steps`):

1. `open`: record the request (α, threshold, mode, pointing), read the session's
   memory along the current version's path and resolve references in the instruction against it;
2. `plan`: the cached preview's plan, or a fresh one (OCR text and history; each step stoppable);
3. `act`: the one place a planned turn is carried out — a plan whose every subtask is a *session operation*
   (a kind registered in `SessionCore.operations`, e.g. a history command the planner reads from words) is executed
   by its handler; any other plan gets the turn's one tool graph, pointing asked for first when needed, and the
   search (`costa.agent.run_turn`), its events folded into the view as they come;
4. `save`: the result (and each accepted subtask's image) as versions — not when stopped, unverified, or when
   reflection asks to point; an upload is stored here, only when the turn keeps a version, did a subtask, or needs
   the image for what comes next (unverified, pointing asked for, a proposal): a turn that planned nothing stores
   nothing; a result costa cannot vouch for becomes the session's pending proposal instead of a version
   (`costa.session.proposals`: the user accepts or discards it);
5. `remember`: the turn in the session's memory;
6. `record` (always, even when stopped or failing): the turn's events, summary, status and plan in the store.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any

import numpy as np

from costa.agent import TurnEnv, run_turn
from costa.errors import InputError
from costa.eventlog import event_to_dict
from costa.events import Event, LlmCall, PlanReady
from costa.messages import plain_reasons
from costa.models.control import ToolStoppedError, TurnControl, run_stoppable
from costa.pointing import describe_region
from costa.reflect.report import chat_note
from costa.reflect.session import FinishedTurn, remember_turn
from costa.session.conversation import path_memory
from costa.session.runtime import STOPPED_BY_LEFT, STOPPED_BY_STOP, SessionRuntime
from costa.session.targets import pointing_first, record_targets, target_panels
from costa.session.turns import HISTORY_TURNS, PlanResult, plan_turn
from costa.session.verdicts import trace_task
from costa.session.view import GraphLayout, TurnView
from costa.store import Session, Version
from costa.turn.graphs import build_graph
from costa.turn.records import REMEMBERED_LABEL, UserRegion
from costa.types import Mask, Plan

if TYPE_CHECKING:
    from costa.session.core import SessionCore, TurnRequest

#: A session operation's handler: (the running turn, the planned subtask) → a line for the chat.
Operation = Callable[["TurnRun", Any], str]
Step = Generator[tuple[TurnView, Event | None], None, None]


class TurnRun:
    """The state of one turn while it runs (see the module docstring); made and driven by `SessionCore.run`."""

    def __init__(
        self,
        core: SessionCore,
        session: Session,
        rt: SessionRuntime,
        req: TurnRequest,
        on_progress: Callable[[Event], None] | None = None,
    ) -> None:
        self.core, self.session, self.rt, self.req, self.on_progress = core, session, rt, req, on_progress
        self.events: list[Event] = []
        self.plan: Plan | None = None
        self.result_version: int | None = None
        self.status = "failed"
        self.control = TurnControl(stop=rt.stop, on_event=self._tool_event)  # Stop also interrupts a diffusion call
        self.open()

    # ------------------------------------------------------------------------------------------------ steps

    def steps(self) -> Step:
        """Run the turn, yielding (view, event) as it goes; the last yield is the finished view."""
        try:
            yield self.view, None
            planned = yield from self.plan_step()
            if planned.plan is not None:
                yield from self.act(planned.plan)
            self.save()
            self.remember(planned)
            done = ("done", "partial", "unverified", "proposed", "stopped")
            self.status = self.view.status if self.view.status in done else "failed"
        except ToolStoppedError:  # Stop pressed while planning's LLM call or reflection's experts ran
            self.status = "stopped"
            self.view.stop()
        except GeneratorExit:  # whoever ran the turn stopped reading it: the page was reloaded or closed
            self.status = "stopped"
            self.rt.stop_reason = self.rt.stop_reason or STOPPED_BY_LEFT
            self.view.stop()
            raise
        finally:
            self.record()
        self.view.status = self.status
        self.view.result_number = self.core.versions.version_number(self.session.id, self.result_version)
        yield self.view, None

    def open(self) -> None:
        """Record the request, resolve references in the instruction against the memory (an upload is stored by
        `save`, when the turn keeps it)."""
        core, req, session = self.core, self.req, self.session
        assert req.upload is not None or req.base is not None  # prepare() made sure there is a current version
        self.head: Version | None = req.base
        self.turns = core.store.turns(session.id)
        self.number = len(self.turns) + 1
        opts = req.options
        view = core.vocabulary.view(req.instruction, opts.threshold, region_note=describe_region(req.region))
        view.notes.extend(req.notes)
        self.view = view
        self.params = self._params()
        self.memory = path_memory(core.store, session)  # earlier turns on this version's path: regions, references
        self.resolved = self.memory.resolve(req.instruction)
        if self.resolved.changed:  # how a reference was read, shown with the instruction (and after a reload)
            view.reading = f"Read as “{self.resolved.text}” ({self.resolved.note})."
            self.params["reading"] = view.reading
        region = req.region
        if self.resolved.region is not None and self.resolved.region.any() and not region.artifacts():
            parts = tuple((name, Mask(m, label=REMEMBERED_LABEL)) for name, m in self.resolved.parts if m.any())
            mask = Mask(self.resolved.region, label=REMEMBERED_LABEL)
            region = UserRegion(masks=(mask,), parts=parts)  # "make it darker"; "them": each thing its own part
        elif self.resolved.box is not None and not region.artifacts():
            region = UserRegion(boxes=(self.resolved.box,))  # "make it red" acts where the turn it refers to did
        self.region = region
        base = self.head.id if self.head is not None else None
        refine = opts.action == "refine"
        if refine and core.proposals.pending(session.id, req.owner) is None:
            raise InputError("no proposal is waiting in this session: nothing to refine, nothing was changed")
        if not refine:
            core.proposals.replaced(session.id)  # a new turn: a proposal nobody decided is no longer offered
        self.turn_id = core.store.start_turn(session.id, base, req.instruction, None, self.params)
        if refine:  # Refine: the pending proposal is recorded as refined by this turn (neither accepted nor discarded)
            core.proposals.refined(session.id, req.owner, self.turn_id)
        view.turn_id, view.turn_number = self.turn_id, self.number

    def plan_step(self) -> Generator[tuple[TurnView, Event | None], None, PlanResult]:
        """The preview's cached plan (when the instruction was read as typed), or a fresh one, each planning step in
        a worker (Stop does not wait for an endpoint); returns the `PlanResult`."""
        view, req, resolved = self.view, self.req, self.resolved
        if resolved.changed:
            view.notes.append(view.reading)
        if req.cached is not None and not resolved.changed:
            for ev in req.cached.events:
                self.events.append(ev)
                view.apply(ev)
            planned = req.cached
        else:
            history = self.memory.summary_lines(HISTORY_TURNS) or [t.instruction for t in self.turns][-HISTORY_TURNS:]
            gen = plan_turn(self.core.services, self.core.client(), resolved.text, req.image, history)
            while True:
                try:
                    ev = run_stoppable(lambda: next(gen), self.control, "", "planner", 0, exclusive=False)
                except StopIteration as stop:
                    planned = stop.value
                    break
                self.events.append(ev)
                view.apply(ev)
                yield view, ev
        self.plan = planned.plan if planned.plan is not None else view.plan
        return planned

    def act(self, plan: Plan) -> Step:
        """Carry out the plan: session operations by their handlers, anything else by the search."""
        handlers = self.core.operations
        if plan.subtasks and all(s.kind in handlers for s in plan.subtasks):
            for s in plan.subtasks:
                self.view.notes.append(handlers[s.kind](self, s))
            self.view.status = "done"
            yield self.view, None
            return
        yield from self.search(plan)

    def search(self, plan: Plan) -> Step:
        """The turn's one tool graph, pointing asked for first when a target needs it, then `run_turn`."""
        core, view, opts = self.core, self.view, self.req.options
        tg = build_graph(core.services, plan, self.region)
        view.layout = GraphLayout.from_tool_graph(tg, core.previews.estimate)
        view.needs_pointing = core.previews.pointing_subtasks(plan, tg.unavailable)
        view.plain.update(plain_reasons(core.services.tables, plan, tg.unavailable, view.needs_pointing))
        yield view, None
        runtime = core.fast_slow() if opts.mode == "fast-slow" else None
        # Ask for pointing before anything runs, unless the user chose "do the rest" (the CLI always does: the
        # subtasks that do not depend on the unfound target run, and it exits 3).
        ask = pointing_first(core.services, plan, self.region) if opts.action != "rest" else None
        env = TurnEnv(self.memory, self.control, runtime, task=trace_task(self.turn_id))  # verdicts find its traces
        turn = ask or run_turn(core.services, self.req.image, plan, opts.config(), self.region, tg, env)
        for ev in turn:
            if isinstance(ev, PlanReady):
                continue  # the planner already announced the plan
            self.events.append(ev)
            view.apply(ev)
            if (note := chat_note(ev)) is not None:
                view.notes.append(note)  # reflection retries and best-of choices, said in the chat
            yield view, ev
            if self.rt.stop.is_set():
                close = getattr(turn, "close", None)
                if close is not None:
                    close()
                view.stop()
                break

    def save(self) -> None:
        """The result as the new current version, unless the turn was stopped, is unverified, or reflection asks the
        user to point (then sending again after pointing edits the image as it was; accepting saves it); a proposed
        turn's result becomes the session's pending proposal (a version only once the user accepts it)."""
        view, accept = self.view, self.req.options.accept_unverified
        outcome = view.outcome
        # `accept` (the CLI's --accept-unverified, a campaign run) takes an unverified target's edit and a proposal as
        # the result asked for up front: kept as versions, with no pending proposal and no person's verdict recorded
        # (the turn's record still says what was unverified or proposed). A turn that also skipped a subtask has the
        # status "unverified" or "proposed", not "partial": it is kept alike (it was not: a campaign's evaluators saw
        # an unchanged image for CoSTA* sample 32's deblurring, done, because its upscaling was proposed).
        keeps = outcome is not None and outcome.image is not None and view.status != "stopped"
        held = view.status in ("unverified", "proposed") or bool(view.ask_pointing)  # waits for the person's word
        keeps = keeps and (not held or accept)
        proposal = outcome is not None and outcome.image is not None and view.status == "proposed" and not accept
        follow_up = view.status == "unverified" or view.ask_pointing or bool(view.done_subtasks) or proposal
        if view.status != "stopped" and (keeps or follow_up):
            self._keep_upload()
        if proposal:  # not a version until the user accepts it
            assert outcome is not None and outcome.image is not None
            base = self.head.id if self.head is not None else None
            view.proposal_id = self.core.proposals.keep(self.session.id, self.turn_id, base, outcome.image, view).id
        if keeps:
            assert outcome is not None and outcome.image is not None
            self.result_version = self._save_versions(outcome.image)
            view.result_version = self.result_version
        self.core.previews.after_turn_pointing(view, self.params["given"])
        target_panels(view)

    def remember(self, planned: PlanResult) -> None:
        """The turn in the session's memory (its plan, the regions it changed, reflection's feedback)."""
        if planned.plan is None or self.view.outcome is None:
            return
        box0 = self.region.boxes[0] if self.region.boxes else None
        turn = FinishedTurn(
            self.turn_id, self.req.instruction, self.resolved.text, planned.plan, self.req.image, self.events, box0
        )
        remember_turn(self.core.store, self.session.id, turn)

    def record(self) -> None:
        """The turn's record in the store: events, totals, results, what was skipped or not verified, the plan."""
        view = self.view
        summary: dict[str, Any] = {**view.totals(), "ok": bool(view.outcome and view.outcome.ok)}
        if self.status == "stopped":  # Stop, or the page that ran it went away: the chat says which
            view.stopped_by = summary["stopped_by"] = self.rt.stop_reason or STOPPED_BY_STOP
        if view.outcome is not None:
            summary["results"] = dict(view.outcome.results)
            summary["skipped"] = dict(view.outcome.skipped)
            summary["unverified"] = dict(view.outcome.unverified)
            summary["proposed"] = dict(view.outcome.proposed)
        if view.served:  # fast–slow mode: the rule (or the local A*) that served each subtask
            summary["served"] = dict(view.served)
        if view.path is not None:
            summary["path"] = [list(p) for p in view.path.path]
        record_targets(self.core.store, self.turn_id, self.events)
        plan = self.plan.model_dump(mode="json") if self.plan is not None else None
        events = [event_to_dict(e) for e in self.events]
        self.core.store.finish_turn(self.turn_id, self.status, events, summary, self.result_version, plan)  # type: ignore[arg-type]

    # ------------------------------------------------------------------------------------------------ helpers

    def _params(self) -> dict[str, Any]:
        req, opts = self.req, self.req.options
        params: dict[str, Any] = {
            "alpha": opts.alpha,
            "threshold": opts.threshold,
            "mode": opts.mode,
            "clicks": [list(c) for c in req.clicks],
            "box": req.box,
            "given": sorted(req.region.artifacts()),
            "region_note": self.view.region_note,
            "number": self.number,
        }
        if opts.reflect is not None:
            params["reflect"] = opts.reflect
        if opts.accept_unverified:
            params["accept_unverified"] = True
        if opts.action:
            params["action"] = opts.action
        if req.brush is not None:
            params["brush_px"] = req.brush.area
            params["mask_file"] = self.core.store.save_mask(self.session.id, req.brush.data)
            b = req.brush.bbox()
            params["brush_box"] = None if b is None else [b.x, b.y, b.w, b.h]
        return params

    def _tool_event(self, ev: Event) -> None:
        """From a tool's worker thread, while the turn waits on it: its own endpoint requests count in the ledger."""
        if isinstance(ev, LlmCall):
            self.view.llm.append(ev)
            self.events.append(ev)
        if self.on_progress is not None:
            self.on_progress(ev)

    def _keep_upload(self) -> None:
        """Store the turn's upload as the version it edits (once; nothing when the turn edits the current image)."""
        req, store = self.req, self.core.store
        if self.head is None and req.upload is not None:
            up = req.upload
            self.head = store.add_upload(self.session.id, req.image, up.label, up.source, self.session.head)
            store.set_turn_base(self.turn_id, self.head.id)

    def _save_versions(self, final: np.ndarray) -> int:
        """Store each accepted subtask's image, then the turn's result as the new current version."""
        core, view, sid = self.core, self.view, self.session.id
        assert self.head is not None  # `_keep_upload` stored the upload
        parent = self.head.id
        edits = [d for d in view.done_subtasks.values() if d.image is not None]
        for d in edits:
            if d is edits[-1] and np.array_equal(d.image, final):
                break
            name = core.vocabulary.names.get(d.subtask_kind, d.subtask_kind)
            label = f"{d.subtask_id} {name}"
            v = core.store.add_version(sid, d.image, "subtask", label, parent, view.turn_id, d.subtask_id, False)
            parent = v.id
        label = f"turn {self.number}: {self.req.instruction}"[:60]
        return core.store.add_version(sid, final, "turn", label, parent, view.turn_id).id
