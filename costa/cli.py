"""`python -m costa …`: edit, plan, doctor, bench.

Exit codes: 0 done; 2 bad input or nothing could be done (no output written); 3 partly done (output written, some
subtasks skipped or failed — the message says which).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from costa.errors import CostaError, InputError

EXIT_OK, EXIT_ERROR, EXIT_PARTIAL = 0, 2, 3


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m costa", description="Cost-aware conversational image editing.")
    sub = p.add_subparsers(dest="command", required=True)

    e = sub.add_parser("edit", help="plan and run an edit on an image")
    e.add_argument("image", help="input image file")
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
    e.add_argument("--events", help="also write every event as JSON lines to this file")
    e.add_argument("-q", "--quiet", action="store_true", help="print only the summary")

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

    b = sub.add_parser("bench", help="benchmarks that print ratios against a baseline measured in the same run")
    bsub = b.add_subparsers(dest="bench", required=True)
    bs = bsub.add_parser("search", help="lazy vs eager A* on seeded simulated plans; search overhead")
    bs.add_argument("--seed", type=int, default=0)
    bs.add_argument("--plans", type=int, default=40)
    be = bsub.add_parser("edit", help="end-to-end `costa edit` replacing one word on a 768 px image")
    be.add_argument("--runs", type=int, default=5)
    bt = bsub.add_parser("tools", help="measure every ready embedded tool on synthetic cases; write benchmark.csv")
    bt.add_argument("--cases", type=int, default=12, help="synthetic cases per tool × subtask")
    bt.add_argument("--seed", type=int, default=0)
    bt.add_argument("--write", action="store_true", help="rewrite tool_tables/benchmark.csv with measured rows")
    bt.add_argument("--tools", help="comma-separated tool ids to measure (default: every ready embedded tool)")
    bk = bsub.add_parser("tasks", help="synthetic multi-step tasks: rule plan, run, verify each subtask against truth")
    bk.add_argument("--n", type=int, default=20, help="tasks to generate and run")
    bk.add_argument("--seed", type=int, default=0)
    bp = bsub.add_parser("planner", help="offline planner on the shared benchmark instructions: coverage and speed")
    bp.add_argument("--data", default=None, help="benchmark folder (default ../shared/benchmarks)")
    bn = bsub.add_parser("neural", help="neural tools at real size with random weights: seconds per call and step")
    bn.add_argument("--device", default="cpu", help="cpu, cuda, mps")
    bn.add_argument("--steps", type=int, default=2, help="diffusion steps timed (use 20 on a GPU)")
    bn.add_argument("--write", action="store_true", help="record rows in tool_tables/benchmark_devices.csv")
    bn.add_argument("--tools", help="comma-separated subset of grounding_dino,sam,sd_inpaint,instruct_pix2pix")
    ba = bsub.add_parser("app", help="app start-up time, first streamed event, 8 concurrent clients × 5 edits")
    ba.add_argument("--starts", type=int, default=5, help="app starts timed (median reported)")
    ba.add_argument("--first-runs", type=int, default=10, help="edits timed to their first streamed event")
    ba.add_argument("--clients", type=int, default=8, help="clients editing at once")
    ba.add_argument("--edits", type=int, default=5, help="edits per client")
    return p


def _plan(instruction: str, notes: TextIO, image=None, settings=None):  # -> tuple[Plan, list[Event]]
    """Plan through `plan_instruction`, printing LLM calls and fallback reasons to `notes` as they happen.

    Returns the plan (possibly with no subtasks) and the planning events. Raises `InputError` for an unusable
    instruction and `PlanningError` with the question when the instruction needs clarifying.
    """
    from costa.config import Settings
    from costa.errors import PlanningError
    from costa.events import ClarificationNeeded, ErrorEvent, LlmCall, PlannerFallback, PlanReady
    from costa.planner import plan_instruction

    settings = settings or Settings.from_env()
    events: list = []
    ready = False
    gen = plan_instruction(settings, instruction, image)
    while True:
        try:
            ev = next(gen)
        except StopIteration as stop:
            plan = stop.value
            break
        events.append(ev)
        if isinstance(ev, LlmCall):
            print(f"llm   {_describe_llm_call(ev)}", file=notes)
        elif isinstance(ev, PlannerFallback):
            print(f"planner fallback: {ev.reason}", file=notes)
        elif isinstance(ev, ClarificationNeeded):
            raise PlanningError(ev.question)
        elif isinstance(ev, PlanReady):
            ready = True
        elif isinstance(ev, ErrorEvent) and not ready:
            raise InputError(ev.message)
    if plan is None:  # plan_instruction always says why first; this guards a future event type
        raise PlanningError("no plan could be made from this instruction")
    return plan, events


def _describe_llm_call(ev) -> str:
    cost = f", cost {ev.cost:.6f}" if ev.cost is not None else ""
    if not ev.ok:
        return f"{ev.purpose}: {ev.model} failed after {ev.seconds:.2f} s: {ev.error}"
    return (
        f"{ev.purpose}: {ev.model}, {ev.prompt_tokens} prompt + {ev.completion_tokens} completion tokens, "
        f"{ev.seconds:.2f} s{cost}"
    )


def _print_llm_costs(events, out: TextIO) -> None:
    from costa.events import LlmCall

    calls = [e for e in events if isinstance(e, LlmCall)]
    if not calls:
        return
    tokens_in, tokens_out = sum(c.prompt_tokens for c in calls), sum(c.completion_tokens for c in calls)
    costs = [c.cost for c in calls if c.cost is not None]
    cost = f", cost {sum(costs):.6f}" if costs else ""
    print(
        f"  llm calls {len(calls)} ({sum(not c.ok for c in calls)} failed), tokens {tokens_in} prompt + {tokens_out} "
        f"completion, {sum(c.seconds for c in calls):.3f} s{cost}",
        file=out,
    )


def _plan_json(plan) -> str:
    """The plan as JSON with each subtask's kind name added after its kind (`Plan.from_json` reads it back)."""
    from costa.tables import load_tables

    names = {k: v.name for k, v in load_tables().subtasks.items()}
    data = plan.model_dump(mode="json")
    data["subtasks"] = [
        {"id": s["id"], "kind": s["kind"], "name": names.get(s["kind"], s["kind"])} | s for s in data["subtasks"]
    ]
    return json.dumps(data, indent=2, ensure_ascii=False)


def _print_plan(plan, out: TextIO) -> None:
    from costa.tables import load_tables

    names = {k: v.name for k, v in load_tables().subtasks.items()}
    print(f"plan ({plan.planner}, {plan.form}):", file=out)
    for s in plan.subtasks:
        extra = []
        if s.target:
            extra.append(f"target={s.target!r}")
        if s.result:
            extra.append(f"result={s.result!r}")
        if s.parents:
            extra.append(f"after {', '.join(s.parents)}")
        print(f"  {s.id}. {names.get(s.kind, s.kind)} {' '.join(extra)}", file=out)
    for u in plan.unsupported:
        print(f"  unsupported: {u.text!r} — {u.reason}", file=out)


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
        _print_plan(plan, out)
        _print_llm_costs(events, out)
    if not plan.subtasks:
        print("error: no edit could be planned from this instruction", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK


def cmd_edit(args: argparse.Namespace, out: TextIO) -> int:
    from costa.agent import UserRegion, run_turn
    from costa.events import (
        ErrorEvent,
        PathChosen,
        Retry,
        SubgraphBuilt,
        SubtaskDone,
        ToolFailed,
        ToolFinished,
        TurnDone,
    )
    from costa.images import load_image, load_mask, parse_box, parse_point, save_image
    from costa.models.control import TurnControl
    from costa.services import Services

    output = Path(args.output)
    if output.suffix.lower() not in (".png", ".jpg", ".jpeg", ".webp", ".bmp", ".tif", ".tiff"):
        raise InputError(f"output {output} needs an image suffix such as .png")
    services = Services()
    image = load_image(args.image, services.settings.max_pixels)
    h, w = image.shape[:2]
    region = UserRegion(
        boxes=(parse_box(args.box, w, h),) if args.box else (),
        masks=(load_mask(args.mask, w, h),) if args.mask else (),
        points=tuple(parse_point(p, w, h) for p in args.point),
    )
    plan, planning_events = _plan(args.instruction, out, image, services.settings)
    _print_plan(plan, out)
    if not plan.subtasks:
        raise InputError("no edit could be planned from this instruction; nothing was written")
    events_file = open(args.events, "w", encoding="utf-8") if args.events else None  # noqa: SIM115
    if events_file is not None:  # LLM calls and fallbacks first; run_turn reports the plan itself
        for ev in planning_events:
            if ev.kind in ("llm_call", "planner_fallback"):
                events_file.write(json.dumps(_jsonable(ev), default=str) + "\n")
    done: TurnDone | None = None
    ledger: list[tuple[str, str, int, float, float, bool]] = []
    try:
        def on_progress(ev) -> None:  # per-step progress of diffusion tools, as it happens
            if events_file is not None:
                events_file.write(json.dumps(_jsonable(ev), default=str) + "\n")
            if not args.quiet:
                print(f"  step  {ev.subtask_id} {ev.tool}: {ev.what} {ev.done}/{ev.total}", file=out)

        control = TurnControl(on_event=on_progress)
        turn = run_turn(services, image, plan, args.alpha, args.threshold, region, lazy=not args.eager, control=control)
        for ev in turn:
            if events_file is not None:
                events_file.write(json.dumps(_jsonable(ev), default=str) + "\n")
            if isinstance(ev, ToolFinished):
                ledger.append((ev.subtask_id, ev.tool, ev.attempt, ev.seconds, ev.quality, ev.passed))
                if not args.quiet:
                    mark = "pass" if ev.passed else "FAIL"
                    why = "; ".join(ev.reasons)
                    print(
                        f"  run   {ev.subtask_id} {ev.tool} (attempt {ev.attempt}): {ev.seconds:.3f} s, "
                        f"quality {ev.quality:.2f} {mark} — {why}",
                        file=out,
                    )
            elif isinstance(ev, Retry) and not args.quiet:
                print(f"  retry {ev.subtask_id} {ev.tool} attempt {ev.attempt}: {ev.reason}", file=out)
            elif isinstance(ev, ToolFailed) and not args.quiet:
                print(f"  drop  {ev.subtask_id} {ev.tool}: {ev.reason}", file=out)
            elif isinstance(ev, SubgraphBuilt):
                print(f"tool subgraph: {ev.nodes} nodes, {ev.edges} edges over {', '.join(ev.tools)}", file=out)
                for sid, why in ev.unavailable:
                    print(f"  cannot run {sid}: {why}", file=out)
            elif isinstance(ev, PathChosen):
                steps = " → ".join(f"{t} ({s})" for s, t in ev.path)
                print(f"chosen path: {steps}", file=out)
                print(f"  path {ev.seconds:.3f} s, quality {ev.quality:.3f}, score {ev.score:.4f}", file=out)
            elif isinstance(ev, SubtaskDone):
                print(
                    f"done  {ev.subtask_id} {ev.subtask_kind} via {'+'.join(ev.tools)}: quality "
                    f"{ev.quality:.2f} — {ev.result}",
                    file=out,
                )
            elif isinstance(ev, ErrorEvent):
                print(f"error: {ev.message}", file=sys.stderr)
            elif isinstance(ev, TurnDone):
                done = ev
    finally:
        if events_file is not None:
            events_file.close()
    assert done is not None  # run_turn always ends with TurnDone
    _print_ledger(ledger, done, out)
    _print_llm_costs(planning_events, out)
    if done.image is None:
        print("nothing was written", file=sys.stderr)
        return EXIT_ERROR
    save_image(done.image, output)
    print(f"wrote {output}", file=out)
    if not done.ok:
        for sid, why in done.skipped.items():
            print(f"warning: {sid} was not done: {why}", file=sys.stderr)
        return EXIT_PARTIAL
    return EXIT_OK


def _print_ledger(ledger, done, out: TextIO) -> None:
    print("cost ledger:", file=out)
    print(f"  {'subtask':8} {'tool':24} {'try':>3} {'seconds':>8} {'quality':>7}  check", file=out)
    for sid, tool, attempt, seconds, quality, passed in ledger:
        print(
            f"  {sid:8} {tool:24} {attempt:>3} {seconds:8.3f} {quality:7.2f}  {'pass' if passed else 'fail'}", file=out
        )
    overhead = done.seconds - done.tool_seconds
    print(
        f"  tool runs {done.executions}, tool seconds {done.tool_seconds:.3f}, turn {done.seconds:.3f} s "
        f"(checks + search + I/O {overhead:.3f} s)",
        file=out,
    )


def _jsonable(ev) -> dict:
    import dataclasses

    d = {"kind": ev.kind}
    for f in dataclasses.fields(ev):
        v = getattr(ev, f.name)
        if f.name == "image":
            v = None if v is None else list(v.shape)
        elif f.name == "plan":
            v = v.model_dump()
        d[f.name] = v
    return d


def cmd_doctor(args: argparse.Namespace, out: TextIO) -> int:
    from costa.services import Services

    services = Services()
    rows = []
    for tid, spec in services.tables.tools.items():
        why = services.why_not(tid)
        rows.append(
            {
                "tool": tid,
                "backend": spec.backend,
                "ready": why is None,
                "why": why or "",
                "subtasks": list(spec.subtasks),
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
    if args.bench == "search":
        from costa.bench.search_bench import format_report, run_search_bench

        print(format_report(run_search_bench(seed=args.seed, n_plans=args.plans)), file=out)
    elif args.bench == "edit":
        from costa.bench.edit_bench import run_edit_bench

        print(run_edit_bench(runs=args.runs), file=out)
    elif args.bench == "tools":
        from costa.bench.tools_bench import run_tools_bench

        tools = [t.strip() for t in args.tools.split(",") if t.strip()] if args.tools else None
        if tools is not None:
            from costa.tables import load_tables

            unknown = sorted(set(tools) - set(load_tables().tools))
            if unknown or not tools:
                raise InputError(f"--tools names no known tool: {', '.join(unknown) or args.tools!r}")
        print(run_tools_bench(cases=args.cases, seed=args.seed, write=args.write, tools=tools), file=out)
    elif args.bench == "tasks":
        from costa.bench.tasks import run_tasks_bench

        if args.n < 1:
            raise InputError(f"--n must be at least 1, got {args.n}")
        print(run_tasks_bench(n=args.n, seed=args.seed), file=out)
    elif args.bench == "planner":
        from costa.bench.planner_bench import format_planner_report, run_planner_bench

        print(format_planner_report(run_planner_bench(args.data)), file=out)
    elif args.bench == "neural":
        from costa.bench.neural_bench import TOOLS, run_neural_bench

        chosen = tuple(t.strip() for t in args.tools.split(",")) if args.tools else TOOLS
        if set(chosen) - set(TOOLS) or args.steps < 1:
            raise InputError(f"--tools must name some of {', '.join(TOOLS)} and --steps be >= 1")
        print(run_neural_bench(args.device, args.steps, args.write, chosen), file=out)
    elif args.bench == "app":
        from costa.bench.app_bench import run_app_bench

        print(run_app_bench(args.starts, args.first_runs, args.clients, args.edits), file=out)
    return EXIT_OK


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = _parser().parse_args(argv)
    handlers = {"edit": cmd_edit, "plan": cmd_plan, "doctor": cmd_doctor, "bench": cmd_bench, "models": cmd_models}
    try:
        return handlers[args.command](args, out)
    except CostaError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_ERROR
