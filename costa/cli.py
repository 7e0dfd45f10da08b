"""`python -m costa …`: edit, plan, doctor, serve, bench.

Exit codes: 0 done; 2 bad input or nothing could be done (no output written); 3 partly done (output written, some
subtasks skipped or failed — the message says which); 4 a target was found but not verified (e.g. only the colour of
"the red car" matched), or a result passed its checks where costa's real-photo evidence cannot vouch for them (a
proposal; the message names the context): nothing written unless `--accept-unverified`.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from costa.errors import CostaError, InputError
from costa.session.printing import describe_llm_call, print_llm_costs, print_plan
from costa.turn.records import MODES

EXIT_OK, EXIT_ERROR, EXIT_PARTIAL, EXIT_UNVERIFIED = 0, 2, 3, 4


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m costa", description="Cost-aware conversational image editing.")
    sub = p.add_subparsers(dest="command", required=True)

    e = sub.add_parser("edit", help="plan and run an edit on an image")
    e.add_argument("image", nargs="?", help="input image file (optional with --session: its current image)")
    e.add_argument("instruction", help="what to do, e.g. \"replace the text 'SALE' with 'OPEN'\"")
    e.add_argument("-o", "--output", required=True, help="where to write the edited image")
    e.add_argument("--alpha", type=float, default=None, help="cost/quality trade-off in [0, 2] (0 quality, 2 speed)")
    e.add_argument("--threshold", type=float, default=None, help="quality each check must reach, in [0, 1]")
    e.add_argument("--box", help="target region x,y,w,h in pixels")
    e.add_argument("--mask", help="target mask image (white = region), same size as the image")
    e.add_argument(
        "--point",
        action="append",
        default=[],
        metavar="X,Y[,neg]",
        help="a click on the target in pixels (repeatable); add ',neg' for a click on background",
    )
    e.add_argument("--eager", action="store_true", help="run every successor on expansion (benchmark baseline)")
    e.add_argument(
        "--accept-unverified",
        action="store_true",
        help="edit a target that was found but not verified (e.g. only its colour matched), keep the best attempt "
        "when reflection doubts the target, or write a proposal (a result costa cannot vouch for on real-photo "
        "evidence), instead of exiting 4",
    )
    e.add_argument(
        "--mode",
        choices=tuple(MODES),
        default=None,
        help="search mode: lazy A* (default), eager A* (published), fast-slow (FaSTA*: learned subroutines first)",
    )
    e.add_argument("--events", help="also write every event as JSON lines to this file")
    e.add_argument(
        "--no-reflect",
        action="store_true",
        help="skip multi-expert reflection and its retries (also COSTA_REFLECT=0); see tool_tables/reflection.yaml",
    )
    e.add_argument("-q", "--quiet", action="store_true", help="print only the summary")
    e.add_argument("-v", "--verbose", action="store_true", help="technical detail: why a tool cannot run here")
    e.add_argument(
        "--no-record",
        action="store_true",
        help="learn nothing from this run: no tool runs, traces or FaSTA* task count are kept in COSTA_HOME",
    )
    e.add_argument(
        "--session", help="continue this stored session (COSTA_HOME): plan with its history, store the result"
    )

    pl = sub.add_parser(
        "plan",
        help="print the plan for an instruction without running it",
        description="Plan with the LLM at OPENAI_BASE_URL (model COSTA_LLM_MODEL) when set, else with the offline "
        "rule planner; print the validated subtasks in execution order and what cannot be planned.",
    )
    pl.add_argument("instruction")
    pl.add_argument("--image", help="the image the instruction is about (the LLM sees it downscaled to 512 px)")
    pl.add_argument("--json", action="store_true", help="print the plan as JSON (LLM calls and warnings go to stderr)")

    d = sub.add_parser("doctor", help="list every tool: ready or not, and why")
    d.add_argument("--json", action="store_true")

    m = sub.add_parser("models", help="neural weights: list what each tool needs, pull, verify")
    msub = m.add_subparsers(dest="models", required=True)
    msub.add_parser("list", help="every model a neural tool needs: present or missing, size, where")
    mp = msub.add_parser("pull", help="download models into COSTA_MODELS_DIR (needs COSTA_ALLOW_DOWNLOADS=1 or --yes)")
    mp.add_argument("names", nargs="*", help="model ids from `models list`")
    mp.add_argument("--yes", action="store_true", help="download even though COSTA_ALLOW_DOWNLOADS is not set")
    mv = msub.add_parser("verify", help="check files are complete (and hashes when known)")
    mv.add_argument("names", nargs="*", help="model ids (default: every model a neural tool needs)")

    b = sub.add_parser(
        "bench",
        help="benchmarks that print ratios against a baseline measured in the same run (see `bench --help`)",
        add_help=False,
    )
    b.add_argument("bench_args", nargs=argparse.REMAINDER, help="NAME [options]: see `python -m costa bench --help`")
    from costa.models.serving import add_parsers as add_serve_parsers
    from costa.store.commands import add_parsers as add_store_parsers
    from costa.subroutines.commands import add_parsers

    add_serve_parsers(sub)
    add_parsers(sub)
    add_store_parsers(sub)
    from costa.campaign.commands import add_parsers as add_campaign_parsers

    add_campaign_parsers(sub)
    return p


def _plan(instruction: str, notes: TextIO, image=None, settings=None):  # -> tuple[Plan, list[Event]]
    """Plan through `plan_instruction`, printing LLM calls and fallback reasons to `notes` as they happen.

    Returns the plan (possibly with no subtasks) and the planning events. Raises `InputError` for an unusable
    instruction and `PlanningError` with the question when the instruction needs clarifying.
    """
    from costa.config import Settings
    from costa.errors import PlanningError
    from costa.events import ClarificationNeeded, ErrorEvent, LlmCall, PlannerFallback, PlanReady, drain
    from costa.planner import plan_instruction

    settings = settings or Settings.from_env()
    events: list = []

    def see(ev) -> None:
        ready = any(isinstance(e, PlanReady) for e in events)  # an error after the plan is the turn's, not ours
        events.append(ev)
        if isinstance(ev, LlmCall):
            print(f"llm   {describe_llm_call(ev)}", file=notes)
        elif isinstance(ev, PlannerFallback):
            print(f"planner fallback: {ev.reason}", file=notes)
        elif isinstance(ev, ClarificationNeeded):
            raise PlanningError(ev.question)
        elif isinstance(ev, ErrorEvent) and not ready:
            raise InputError(ev.message)

    plan = drain(plan_instruction(settings, instruction, image), see)
    if plan is None:  # plan_instruction always says why first; this guards a future event type
        raise PlanningError("no plan could be made from this instruction")
    return plan, events


def _plan_json(plan) -> str:
    """The plan as JSON with each subtask's kind name added after its kind (`Plan.from_json` reads it back)."""
    from costa.tables import load_tables

    names = {k: v.name for k, v in load_tables().subtasks.items()}
    data = plan.model_dump(mode="json")
    data["subtasks"] = [
        {"id": s["id"], "kind": s["kind"], "name": names.get(s["kind"], s["kind"])} | s for s in data["subtasks"]
    ]
    return json.dumps(data, indent=2, ensure_ascii=False)


def cmd_plan(args: argparse.Namespace, out: TextIO) -> int:
    from costa.config import Settings

    settings = Settings.from_env()
    image = None
    if args.image:
        from costa.images import load_image

        image = load_image(args.image, settings.max_pixels)
    plan, events = _plan(args.instruction, sys.stderr if args.json else out, image, settings)
    if args.json:
        print(_plan_json(plan), file=out)
    else:
        print_plan(plan, out)
        print_llm_costs(events, out)
    if not plan.subtasks:
        print("error: no edit could be planned from this instruction", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK


def cmd_edit(args: argparse.Namespace, out: TextIO) -> int:
    from costa.session.console import run_edit

    return run_edit(args, out)


def cmd_doctor(args: argparse.Namespace, out: TextIO) -> int:
    from costa.models.weights import package_weights
    from costa.services import Services

    services = Services()
    shipped = package_weights(services.settings)  # weights inside registry packages: file, size, SHA-256, licence
    rows: list[dict[str, Any]] = []
    for tid, spec in services.tables.tools.items():
        why = services.why_not(tid)
        rows.append(
            {
                "tool": tid,
                "backend": spec.backend,
                "ready": why is None,
                "why": why or "",
                "subtasks": list(spec.subtasks),
                "weights": [w.record() for w in shipped if w.spec.id in spec.requirements.weights],
            }
        )
    if args.json:
        print(json.dumps(rows, indent=2), file=out)
        return EXIT_OK
    ready = sum(r["ready"] for r in rows)
    print(f"{ready} of {len(rows)} tools ready", file=out)
    for r in rows:
        state = "ready  " if r["ready"] else "missing"
        print(f"  {state} {r['tool']:24} {r['backend']:8} {r['why']}", file=out)
    uncovered = [
        s.name for s in services.tables.subtasks.values() if not any(r["ready"] for r in rows if s.id in r["subtasks"])
    ]
    if uncovered:
        print(f"subtasks with no ready tool: {', '.join(uncovered)}", file=out)
    from costa.models.serving import runner_line, store_line

    print(runner_line(services), file=out)
    print(store_line(services.settings), file=out)
    print("weights shipped inside registry packages (requirements-nodeps.txt, installed with --no-deps):", file=out)
    for w in shipped:
        print(f"  {w.line()}", file=out)
    from costa.subroutines.commands import print_estimates

    print_estimates(out)
    return EXIT_OK


def cmd_models(args: argparse.Namespace, out: TextIO) -> int:
    from costa.config import Settings
    from costa.models import manage
    from costa.tables import load_tables

    settings, tables = Settings.from_env(), load_tables()
    if args.models == "list":
        print(manage.format_list(manage.list_models(tables, settings)), file=out)
        return EXIT_OK
    if args.models == "pull":
        for line in manage.pull_models(args.names, settings, explicit=args.yes):
            print(line, file=out)
        return EXIT_OK
    ok, lines = manage.verify_models(args.names, tables, settings)
    print("\n".join(lines), file=out)
    return EXIT_OK if ok else EXIT_ERROR


def cmd_bench(args: argparse.Namespace, out: TextIO) -> int:
    """Hand the arguments to the benchmark package (`bench/` beside `costa/` in a checkout; not in the library)."""
    try:
        from bench.cli import main as bench_main
    except ModuleNotFoundError:
        root = Path(__file__).resolve().parents[1]
        if not (root / "bench" / "cli.py").is_file():
            print(
                "error: the benchmarks live in the repository's bench/ folder, which this install lacks",
                file=sys.stderr,
            )
            return EXIT_ERROR
        sys.path.insert(0, str(root))
        from bench.cli import main as bench_main
    import contextlib

    with contextlib.redirect_stdout(out):  # reports go where the caller asked (tests pass a buffer)
        return bench_main(args.bench_args)


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["bench"]:  # the benchmark package parses its own options (`python -m costa bench --help`)
        return cmd_bench(argparse.Namespace(bench_args=argv[1:]), out)
    args = _parser().parse_args(argv)
    from costa.models.serving import cmd_serve
    from costa.store.commands import cmd_store
    from costa.subroutines.commands import cmd_mine, cmd_rules

    handlers = {"edit": cmd_edit, "plan": cmd_plan, "doctor": cmd_doctor, "bench": cmd_bench, "models": cmd_models}
    handlers |= {"mine": cmd_mine, "rules": cmd_rules, "store": cmd_store, "serve": cmd_serve}
    from costa.campaign.commands import cmd_campaign

    handlers["campaign"] = cmd_campaign
    try:
        return handlers[args.command](args, out)
    except CostaError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_ERROR
