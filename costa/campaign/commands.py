"""`python -m costa campaign …`: import-tasks, create, run, status, items, import-scores, report.

Exit codes: 0 done; 2 bad input (nothing changed); 3 `run` finished with some items failed (their errors are in
`status`); 130 `run` interrupted by Ctrl-C (finished items kept: run it again to continue).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, TextIO

from costa.errors import InputError

EXIT_OK, EXIT_ERROR, EXIT_PARTIAL, EXIT_INTERRUPTED = 0, 2, 3, 130
#: Columns of an `import-scores` sheet.
SCORE_COLUMNS = ("item", "subtask", "evaluator", "score", "comment")


def add_parsers(sub: Any) -> None:
    """Add `campaign` and its subcommands to the CLI's subparsers."""
    c = sub.add_parser("campaign", help="evaluation campaigns: task sets × conditions scored blind by people")
    cs = c.add_subparsers(dest="campaign", required=True)
    it = cs.add_parser("import-tasks", help="write a task set from a benchmark folder (costa, magicbrush, …)")
    it.add_argument("format", choices=("costa", "magicbrush", "editeval", "mteditbench"))
    it.add_argument("source", help="the benchmark's folder (e.g. ../shared/benchmarks/editeval_v1)")
    it.add_argument("-o", "--output", required=True, help="task set file to write (.json, .yaml)")
    it.add_argument("--images", help="MTEditBench: folder of your images, <task_id>.png")
    it.add_argument("--limit", type=int, help="keep this many tasks, spread over the categories")
    cr = cs.add_parser("create", help="a campaign: every task × every condition, assigned to evaluators")
    cr.add_argument("name")
    cr.add_argument("--tasks", required=True, action="append", help="task set file (repeatable: the sets are joined)")
    cr.add_argument("--conditions", default="", help='e.g. "alpha=0,1,2; mode=lazy,fast-slow; reflect=on,off"')
    cr.add_argument("--evaluators", default="", help="comma-separated names (the signed-in users with COSTA_AUTH)")
    cr.add_argument("--overlap", type=int, default=None, help="evaluators per item, K (default 2, at most all)")
    cr.add_argument("--admins", default="", help="signed-in users who may open the admin view (it shows conditions)")
    r = cs.add_parser("run", help="run the campaign's items through costa (resumable: run again to continue)")
    r.add_argument("name")
    r.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1), help="items run at once")
    st = cs.add_parser("status", help="items run, failed, pending; scoring progress per evaluator")
    st.add_argument("name")
    li = cs.add_parser("items", help="every item: task, condition, subtasks")
    li.add_argument("name")
    li.add_argument("--json", action="store_true")
    im = cs.add_parser(
        "import-scores", help="scores from a spreadsheet: columns item, subtask, evaluator, score, comment"
    )
    im.add_argument("name")
    im.add_argument("file", help="CSV file")
    rp = cs.add_parser("report", help="accuracy per condition and category, agreement, costa vs humans, the plot")
    rp.add_argument("name")
    rp.add_argument("--json", action="store_true")
    rp.add_argument("--plot", help="write the cost vs human-quality plot (PNG) here")


def _db() -> Any:
    from costa.campaign.db import CampaignDb
    from costa.config import Settings
    from costa.store import Store

    return CampaignDb(Store.from_settings(Settings.from_env()))


def cmd_campaign(args: argparse.Namespace, out: TextIO) -> int:
    handlers = {
        "import-tasks": _import_tasks,
        "create": _create,
        "run": _run,
        "status": _status,
        "items": _items,
        "import-scores": _import_scores,
        "report": _report,
    }
    return handlers[args.campaign](args, out)


def _import_tasks(args: argparse.Namespace, out: TextIO) -> int:
    from costa.campaign.importers import import_tasks
    from costa.campaign.tasks import write_task_set

    ts = import_tasks(args.format, Path(args.source), Path(args.images) if args.images else None, args.limit)
    path = write_task_set(ts, Path(args.output))
    for note in ts.notes:
        print(f"note: {note}", file=sys.stderr)
    cats = Counter(t.category for t in ts.tasks)
    turns = sum(len(t.turns) for t in ts.tasks)
    print(f"wrote {path}: {len(ts.tasks)} tasks, {turns} turns ({', '.join(f'{k} {v}' for k, v in cats.items())})",
          file=out)  # fmt: skip
    return EXIT_OK


def _check_images(tasks: Any, max_pixels: int) -> None:
    from PIL import Image, UnidentifiedImageError

    for t in tasks:
        try:
            with Image.open(t.image) as img:
                w, h = img.size
        except (OSError, UnidentifiedImageError) as e:
            raise InputError(f"task {t.id}: image {t.image} is not a readable image") from e
        if w * h > max_pixels:
            raise InputError(f"task {t.id}: image {t.image} is {w}x{h}, over COSTA_MAX_PIXELS ({max_pixels})")


def _create(args: argparse.Namespace, out: TextIO) -> int:
    from costa.campaign.assign import assign, check_evaluators
    from costa.campaign.conditions import parse_conditions
    from costa.campaign.records import Campaign, Item, check_name, item_id
    from costa.campaign.tasks import TaskSet, load_task_set
    from costa.config import Settings

    name = check_name(args.name)
    sets = [load_task_set(p) for p in args.tasks]
    tasks = tuple(t for s in sets for t in s.tasks)
    dupes = sorted(k for k, v in Counter(t.id for t in tasks).items() if v > 1)
    if dupes:
        raise InputError(f"task id {dupes[0]!r} is in more than one of the task sets")
    _check_images(tasks, Settings.from_env().max_pixels)
    conditions = parse_conditions(args.conditions)
    evaluators = [e for e in args.evaluators.split(",") if e.strip()] if args.evaluators else []
    overlap = args.overlap if args.overlap is not None else min(2, max(1, len(evaluators)))
    evaluators = list(check_evaluators(evaluators, overlap))
    campaign = Campaign(
        name, ";".join(str(Path(p).resolve()) for p in args.tasks), TaskSet(tasks, Path(args.tasks[0]).resolve()),
        conditions, tuple(evaluators), overlap, time.time(), tuple(a for a in args.admins.split(",") if a.strip()),
    )  # fmt: skip
    items = [
        Item(item_id(name, t.id, c), name, n, t.id, c, "pending")
        for n, (t, c) in enumerate((t, c) for t in tasks for c in conditions)
    ]
    queues = assign([(i.id, i.condition.label) for i in items], evaluators, overlap, seed=name)
    db = _db()
    db.create(campaign, items, queues)
    print(f"campaign {name}: {len(tasks)} tasks × {len(conditions)} condition(s) = {len(items)} items", file=out)
    for c in conditions:
        print(f"  condition {c.label}", file=out)
    if evaluators:
        loads = ", ".join(f"{e} {len(q)}" for e, q in queues.items())
        print(f"  each item scored by {overlap} of {len(evaluators)} evaluators (items each: {loads})", file=out)
    else:
        print("  no evaluators named: scores can still come in with `campaign import-scores`", file=out)
    print(f"next: python -m costa campaign run {name}", file=out)
    return EXIT_OK


def _run(args: argparse.Namespace, out: TextIO) -> int:
    from costa.campaign.runner import run_campaign
    from costa.config import Settings
    from costa.services import Services
    from costa.session.core import SessionCore
    from costa.store import Quotas, Store
    from costa.store.backends import database_for

    settings = Settings.from_env()
    # A campaign's sessions are its admin's data, not a signed-in user's: the per-user quotas do not bound them
    # (a 1,000-item campaign makes 1,000 sessions).
    store = Store(settings.home, database_for(settings), Quotas(sessions=0, versions=0, bytes=0))
    from costa.campaign.db import CampaignDb

    db = CampaignDb(store)
    db.campaign(args.name)  # a clear message before the tools load
    core = SessionCore(Services(settings), store)
    try:
        summary = run_campaign(core, db, args.name, args.workers, sys.stderr)
    finally:
        core.close()
    if summary.recovered:
        print(f"resumed: {summary.recovered} item(s) a stopped run left running were run again", file=out)
    print(f"ran {summary.done} item(s), {summary.failed} failed; {summary.remaining} left to run", file=out)
    if summary.interrupted:
        print(f"interrupted: run `python -m costa campaign run {args.name}` again to continue", file=out)
        return EXIT_INTERRUPTED
    return EXIT_PARTIAL if summary.failed else EXIT_OK


def _status(args: argparse.Namespace, out: TextIO) -> int:
    db = _db()
    campaign = db.campaign(args.name)
    items = db.items(args.name)
    counts = Counter(i.status for i in items)
    print(f"campaign {campaign.name}: {len(items)} items — " + ", ".join(
        f"{counts.get(s, 0)} {s}" for s in ("done", "failed", "pending", "running")), file=out)  # fmt: skip
    for c in campaign.conditions:
        mine = [i for i in items if i.condition.label == c.label]
        done = [i for i in mine if i.status == "done"]
        tool = sum(i.tool_seconds or 0.0 for i in done)
        print(f"  {c.label:34} {len(done)}/{len(mine)} done, {tool:.1f} tool seconds", file=out)
    for i in [i for i in items if i.status == "failed"][:10]:
        print(f"  failed: task {i.task_id} ({i.condition.label}): {i.error}", file=out)
    from costa.campaign.desk import progress

    for p in progress(db, args.name):
        print(f"  evaluator {p.evaluator}: {p.scored_subtasks}/{p.ready_subtasks} subtasks scored "
              f"({p.ready_items} of {p.assigned_items} assigned items ready)", file=out)  # fmt: skip
    others = sorted({s.evaluator for s in db.scores(args.name)} - set(campaign.evaluators))
    if others:
        print(f"  scores imported from others: {', '.join(others)}", file=out)
    return EXIT_OK


def _items(args: argparse.Namespace, out: TextIO) -> int:
    db = _db()
    db.campaign(args.name)
    units: dict[str, list[Any]] = {}
    for u in db.units(args.name):
        units.setdefault(u.item_id, []).append(u)
    rows = [
        {
            "item": i.id,
            "task": i.task_id,
            "condition": i.condition.as_dict(),
            "subtasks": [{"id": u.unit, "kind": u.kind, "category": u.category} for u in units.get(i.id, [])],
        }
        for i in db.items(args.name)
    ]
    if args.json:
        print(json.dumps(rows, indent=1, ensure_ascii=False), file=out)
        return EXIT_OK
    for r, i in zip(rows, db.items(args.name), strict=True):
        subs = ", ".join(f"{s['id']} {s['category']}" for s in r["subtasks"]) or "(not run yet)"
        print(f"{r['item']}  task {r['task']:24} {i.condition.label:28} {i.status:8} {subs}", file=out)
    return EXIT_OK


def read_score_sheet(path: Path) -> list[Any]:
    """Rows of a score sheet (CSV with the `SCORE_COLUMNS` header) as `ScoreRow`s.

    Raises:
        InputError: a missing file or column, or a score that is not a number (naming the row).
    """
    from costa.campaign.stats import ScoreRow

    if not path.is_file():
        raise InputError(f"score sheet {path} does not exist")
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        missing = [c for c in SCORE_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(f"score sheet {path}: missing column(s) {missing}; expected {', '.join(SCORE_COLUMNS)}")
        rows = []
        for n, r in enumerate(reader, 2):
            try:
                score = float(r["score"])
            except (TypeError, ValueError) as e:
                raise InputError(f"score sheet {path}, line {n}: score {r['score']!r} is not a number") from e
            rows.append(ScoreRow((r["item"] or "").strip(), (r["subtask"] or "").strip(),
                                 (r["evaluator"] or "").strip(), score, (r["comment"] or "").strip()))  # fmt: skip
    if not rows:
        raise InputError(f"score sheet {path} has no rows")
    return rows


def _import_scores(args: argparse.Namespace, out: TextIO) -> int:
    db = _db()
    campaign = db.campaign(args.name)
    rows = read_score_sheet(Path(args.file))
    n = db.save_scores(campaign.name, rows)
    who = Counter(r.evaluator for r in rows)
    print(f"imported {n} score(s) into {campaign.name}: " + ", ".join(f"{k} {v}" for k, v in who.items()), file=out)
    return EXIT_OK


def _report(args: argparse.Namespace, out: TextIO) -> int:
    from costa.campaign.report import CampaignData, build_report, format_report, plot

    db = _db()
    campaign = db.campaign(args.name)
    data = CampaignData(campaign, db.items(args.name), db.units(args.name), db.scores(args.name))
    report = build_report(data)
    if args.plot:
        plot(report, Path(args.plot), f"campaign {campaign.name}: cost vs human-scored quality")
    if args.json:
        print(json.dumps(report, indent=1, ensure_ascii=False), file=out)
    else:
        print("\n".join(format_report(report, campaign.name)), file=out)
        if args.plot:
            print(f"wrote {args.plot}", file=out)
    return EXIT_OK
