"""`python -m costa edit` on the session core: the same validation, planning (OCR text, history), click handling and
turn as the app, printed as text.

Without `--session` the turn runs in a throwaway store (nothing is kept); with `--session ID` it continues a stored
session under COSTA_HOME: the image (optional) becomes its new current version, the instruction is planned with the
session's earlier instructions, and the result is stored as a version that the app's History shows.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

from costa.errors import InputError, PlanningError

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
    with tempfile.TemporaryDirectory(prefix="costa-cli-") as scratch:
        store = Store(settings.home) if args.session else Store(Path(scratch))
        core = SessionCore(Services(settings), store)
        try:
            return _edit(core, args, output, out)
        finally:
            core.close()


def _edit(core: Any, args: argparse.Namespace, output: Path, out: TextIO) -> int:
    from costa.eventlog import event_to_dict
    from costa.images import load_mask, parse_point
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
    req = core.prepare(
        sid, None, instruction, opts, [(p.x, p.y) for p in points if p.positive], args.box or "", mask, upload,
        negatives=[(p.x, p.y) for p in points if not p.positive],
    )  # fmt: skip
    for note in req.notes:
        print(f"note: {note}", file=sys.stderr)
    events_file = open(args.events, "w", encoding="utf-8") if args.events else None  # noqa: SIM115
    ledger: list[tuple[str, str, int, float, float, bool]] = []
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
            _print_event(ev, args.quiet, ledger, out, core.unreferenced, shown.plain, getattr(args, "verbose", False))
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
    _print_ledger(ledger, done, out)
    for s, why in done.unverified.items():
        print(f"  {s:8} target not verified{' (accepted)' if accept else ''}: {why}", file=out)
    from costa.cli import _print_llm_costs

    _print_llm_costs(view.llm, out)
    if done.unverified and not accept:
        for s, why in done.unverified.items():
            print(f"error: the target of {s} was not verified — {why}", file=sys.stderr)
        print(
            "nothing was written: point at the object (--point x,y or --box x,y,w,h) or pass --accept-unverified "
            "to edit the candidate region",
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
    if done.image is None:
        print("nothing was written", file=sys.stderr)
        return EXIT_ERROR
    from costa.images import save_image

    save_image(done.image, output)
    print(f"wrote {output}", file=out)
    if args.session:
        print(f"stored as version v{view.result_number} of session {sid[:6]}… (turn {view.turn_number})", file=out)
    if not done.ok:
        for s, why in done.skipped.items():
            print(f"warning: {s} was not done: {why}", file=sys.stderr)
        return EXIT_PARTIAL
    return EXIT_OK


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


def _print_event(
    ev: Any,
    quiet: bool,
    ledger: list[Any],
    out: TextIO,
    unreferenced: frozenset[str] = frozenset(),
    plain: dict[str, str] | None = None,
    verbose: bool = False,
) -> None:
    """One event as CLI lines; a subtask no tool can run is said in one plain sentence (`plain`), the technical
    reason only with `-v`."""
    from costa import events as E
    from costa.cli import _describe_llm_call, _print_plan

    if isinstance(ev, E.PlanReady):
        _print_plan(ev.plan, out)
    elif isinstance(ev, E.LlmCall):
        print(f"llm   {_describe_llm_call(ev)}", file=out)
    elif isinstance(ev, E.PlannerFallback):
        print(f"planner fallback: {ev.reason}", file=out)
    elif isinstance(ev, E.ToolFinished):
        ledger.append((ev.subtask_id, ev.tool, ev.attempt, ev.seconds, ev.quality, ev.passed))
        if not quiet:
            mark = "pass" if ev.passed else "FAIL"
            print(
                f"  run   {ev.subtask_id} {ev.tool} (attempt {ev.attempt}): {ev.seconds:.3f} s, "
                f"quality {ev.quality:.2f} {mark} — {'; '.join(ev.reasons)}",
                file=out,
            )
    elif isinstance(ev, E.Retry) and not quiet:
        print(f"  retry {ev.subtask_id} {ev.tool} attempt {ev.attempt}: {ev.reason}", file=out)
    elif isinstance(ev, E.ToolFailed) and not quiet:
        print(f"  drop  {ev.subtask_id} {ev.tool}: {ev.reason}", file=out)
    elif isinstance(ev, E.SubgraphBuilt):
        print(f"tool subgraph: {ev.nodes} nodes, {ev.edges} edges over {', '.join(ev.tools)}", file=out)
        for sid, why in ev.unavailable:
            print(f"  cannot run {sid}: {plain.get(sid, why) if plain and not verbose else why}", file=out)
    elif isinstance(ev, E.PathChosen):
        print(f"chosen path: {' → '.join(f'{t} ({s})' for s, t in ev.path)}", file=out)
        print(f"  path {ev.seconds:.3f} s, quality {ev.quality:.3f}, score {ev.score:.4f}", file=out)
    elif isinstance(ev, E.SubtaskDone):
        unchecked = " (answer not verified: only its form was checked)" if ev.subtask_kind in unreferenced else ""
        print(
            f"done  {ev.subtask_id} {ev.subtask_kind} via {'+'.join(ev.tools)}: quality {ev.quality:.2f}{unchecked} — "
            f"{ev.result}",
            file=out,
        )
    elif isinstance(ev, E.TargetUnverified):
        print(f"unverified {ev.subtask_id} {ev.target!r}: {ev.summary}", file=out)
    elif isinstance(ev, E.PointingNeeded):
        print(f"point first {', '.join(ev.subtask_ids)}: {ev.reason}", file=out)
    elif ev.kind in ("rule_hit", "fallback", "induction_done"):
        if not quiet:
            from costa.subroutines.commands import describe_event

            print(describe_event(ev), file=out)
    elif ev.kind in ("reflection", "reflection_retry", "reflection_kept", "expert_dropped"):
        if not quiet or ev.kind == "reflection_kept":
            from costa.reflect.report import describe_event as describe_reflection

            print(describe_reflection(ev), file=out)
    elif isinstance(ev, E.ErrorEvent):
        said = ev.message
        if plain and not verbose and said.startswith("no subtask can run here"):
            said = "no subtask can run here: " + " ".join(plain.values()) + " (-v for the details)"
        print(f"error: {said}", file=sys.stderr)


def _print_ledger(ledger: list[Any], done: Any, out: TextIO) -> None:
    print("cost ledger:", file=out)
    print(f"  {'subtask':8} {'tool':24} {'try':>3} {'seconds':>8} {'quality':>7}  check", file=out)
    for sid, tool, attempt, seconds, quality, passed in ledger:
        print(
            f"  {sid:8} {tool:24} {attempt:>3} {seconds:8.3f} {quality:7.2f}  {'pass' if passed else 'fail'}", file=out
        )
    print(
        f"  tool runs {done.executions}, tool seconds {done.tool_seconds:.3f}, turn {done.seconds:.3f} s "
        f"(checks + search + I/O {done.seconds - done.tool_seconds:.3f} s)",
        file=out,
    )
