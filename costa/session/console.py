"""`python -m costa edit` on the session core: the same validation, planning (OCR text, history), click handling and
turn as the app, printed as text.

Without `--session` the session (its versions and turns) lives in a throwaway store; with `--session ID` it continues
a stored session under COSTA_HOME: the image (optional) becomes its new current version, the instruction is planned
with the session's earlier instructions, and the result is stored as a version that the app's History shows. Either
way a fast–slow turn's tool runs, traces and the FaSTA* task count are kept in COSTA_HOME, so CLI runs and app turns
add up across processes; `--no-record` learns nothing from the run (nothing is written to COSTA_HOME).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

from costa.errors import InputError, PlanningError
from costa.session.printing import LedgerRow, print_event, print_ledger, print_llm_costs

EXIT_OK, EXIT_ERROR, EXIT_PARTIAL, EXIT_UNVERIFIED = 0, 2, 3, 4
SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp", ".tif", ".tiff")


def run_edit(args: argparse.Namespace, out: TextIO) -> int:
    """Run one edit from parsed CLI arguments; return the exit code (see `costa.cli`)."""
    from costa.config import Settings
    from costa.services import Services
    from costa.session.core import SessionCore
    from costa.store import Store

    output = Path(args.output)
    if output.suffix.lower() not in SUFFIXES:
        raise InputError(f"output {output} needs an image suffix such as .png")
    if not args.image and not args.session:
        raise InputError("give an image file, or --session ID to edit a stored session's current image")
    settings = Settings.from_env()
    services = Services(settings)
    record = not getattr(args, "no_record", False)
    with tempfile.TemporaryDirectory(prefix="costa-cli-") as scratch:
        home = Store.from_settings(settings) if args.session or record else None
        store = home if args.session and home is not None else Store(Path(scratch))
        runtime = None
        if (getattr(args, "mode", None) or "") == "fast-slow":  # its learning goes to COSTA_HOME unless --no-record
            from costa.subroutines.runtime import FastSlowRuntime

            runtime = FastSlowRuntime.from_services(services, home if record and home is not None else store)
            runtime.record = record
        core = SessionCore(services, store, runtime)
        try:
            return _edit(core, args, output, out)
        finally:
            core.close()


def _edit(core: Any, args: argparse.Namespace, output: Path, out: TextIO) -> int:
    from costa.eventlog import event_to_dict
    from costa.images import load_mask, parse_point
    from costa.session.core import Pointing
    from costa.session.turns import TurnOptions, check_instruction

    sid = core.session(args.session, None).id if args.session else core.new_session(None).id
    instruction = check_instruction(args.instruction)
    mode = getattr(args, "mode", None) or ("eager" if args.eager else "lazy")
    accept = bool(getattr(args, "accept_unverified", False))
    reflect = False if getattr(args, "no_reflect", False) else None
    # The CLI cannot ask and wait: it does "the rest" (what does not need an unfound target) and says what to point at.
    opts = TurnOptions.validate(
        core.settings, args.alpha, args.threshold, mode, reflect, action="rest", accept_unverified=accept
    )
    if args.image and not Path(args.image).is_file():
        raise InputError(f"image {args.image} does not exist" if not Path(args.image).exists() else "not a file")
    upload = core.read_upload(args.image) if args.image else None
    image = upload.image if upload is not None else core.head(sid, None)[1]
    if image is None:
        raise InputError(f"session {sid[:6]}… has no image yet: give an image file")
    h, w = image.shape[:2]
    points = [parse_point(p, w, h) for p in args.point]
    mask = load_mask(args.mask, w, h) if args.mask else None
    clicks = [(p.x, p.y) for p in points if p.positive]
    negatives = [(p.x, p.y) for p in points if not p.positive]
    req = core.prepare(sid, None, instruction, opts, Pointing(clicks, args.box or "", mask, negatives), upload)
    for note in req.notes:
        print(f"note: {note}", file=sys.stderr)
    events_file = open(args.events, "w", encoding="utf-8") if args.events else None  # noqa: SIM115
    ledger: list[LedgerRow] = []
    view = None

    def on_progress(ev: Any) -> None:  # per-step progress of diffusion tools and tools' LLM calls, as they happen
        if events_file is not None:
            events_file.write(json.dumps(event_to_dict(ev), default=str) + "\n")
        if not args.quiet and ev.kind == "tool_progress":
            print(f"  step  {ev.subtask_id} {ev.tool}: {ev.what} {ev.done}/{ev.total}", file=out)

    try:
        for shown, ev in core.run(req, on_progress):
            view = shown
            if ev is None:
                continue
            if events_file is not None:
                events_file.write(json.dumps(event_to_dict(ev), default=str) + "\n")
            print_event(ev, args.quiet, ledger, out, core.unreferenced, shown.plain, getattr(args, "verbose", False))
    finally:
        if events_file is not None:
            events_file.close()
    assert view is not None  # run() always yields the finished view
    if view.question:
        raise PlanningError(view.question)
    if view.plan is None and view.outcome is None and view.notes and view.status == "done":
        return _said(core, view, sid, output, out, bool(args.session))  # "undo", "change it back": no search ran
    done = view.outcome
    if view.plan is None or not view.plan.subtasks or done is None:
        why = "; ".join(view.errors)
        raise InputError(
            "no edit could be planned from this instruction; nothing was written" + (f": {why}" if why else "")
        )
    print_ledger(ledger, done, out)
    for s, why in done.unverified.items():
        print(f"  {s:8} target not verified{' (accepted)' if accept else ''}: {why}", file=out)
    for s, why in done.proposed.items():
        print(f"  {s:8} proposed, not verified{' (accepted)' if accept else ''}: {why}", file=out)
    print_llm_costs(view.llm, out)
    refused = _refused(view, done, accept)
    if refused is not None:
        return refused
    if done.image is None:
        print("nothing was written", file=sys.stderr)
        return EXIT_ERROR
    from costa.images import save_image

    save_image(done.image, output)
    print(f"wrote {output}", file=out)
    if args.session:
        print(f"stored as version v{view.result_number} of session {sid[:6]}… (turn {view.turn_number})", file=out)
    if not done.ok:
        verbose = bool(getattr(args, "verbose", False))
        for s, why in done.skipped.items():  # the plain sentence; the packages and weights behind it with -v
            plain = view.plain.get(s)
            said = why if verbose or not plain else plain
            print(f"warning: {s} was not done: {said}", file=sys.stderr)
        return EXIT_PARTIAL
    return EXIT_OK


def _refused(view: Any, done: Any, accept: bool) -> int | None:
    """Exit 4 with the reasons when the turn is not done for sure and the user did not accept it: a target found but
    not verified, a result costa cannot vouch for (a proposal), reflection doubting the target; else None."""
    if done.unverified and not accept:
        for s, why in done.unverified.items():
            print(f"error: the target of {s} was not verified — {why}", file=sys.stderr)
        print(
            "nothing was written: point at the object (--point x,y or --box x,y,w,h) or pass --accept-unverified "
            "to edit the candidate region",
            file=sys.stderr,
        )
        return EXIT_UNVERIFIED
    if done.proposed and not accept:
        for s, why in done.proposed.items():
            print(f"error: {s} passed its checks, but costa cannot vouch for it: {why}", file=sys.stderr)
        print(
            "nothing was written: the result is only a proposal; pass --accept-unverified to write it anyway "
            "(look at it first)",
            file=sys.stderr,
        )
        return EXIT_UNVERIFIED
    if view.ask_pointing and not accept:
        for s, why in view.ask_pointing.items():
            target = view.plan.by_id(s).target or "the target"
            print(f"error: reflection doubts the target of {s} ({target!r}) — {why}", file=sys.stderr)
        print(
            "nothing was written: point at the object (--point x,y or --box x,y,w,h) or pass --accept-unverified "
            "to keep the best attempt",
            file=sys.stderr,
        )
        return EXIT_UNVERIFIED
    return None


def _said(core: Any, view: Any, sid: str, output: Path, out: TextIO, stored: bool) -> int:
    """A history command in words or a change back (`costa.session.conversation`): say it, write the image now."""
    from costa.images import save_image

    for note in view.notes:
        print(note, file=out)
    _, image = core.head(sid, None)
    if image is None:
        print("nothing was written", file=sys.stderr)
        return EXIT_ERROR
    save_image(image, output)
    print(f"wrote {output}", file=out)
    if stored:
        turn = f" (turn {view.turn_number})" if view.turn_number else ""
        print(f"stored as version v{view.result_number} of session {sid[:6]}…{turn}", file=out)
    return EXIT_OK
