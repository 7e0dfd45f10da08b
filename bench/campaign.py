"""Campaign scale: N items × E evaluators scored and reported (target: 1,000 × 3 in under 2 s).

Setup (not timed): a campaign of N items (N/2 tasks × α = 0, 2) whose runs are FAKE — each item is recorded as
finished with 1–5 subtasks and a costa verdict, no tool runs — because this measures the scoring and reporting, not
the editing (`campaign run` is measured by the edits themselves). Timed: every evaluator's scores of every subtask
imported from a CSV sheet in one transaction (what `campaign import-scores` does), then the whole report — accuracy
per condition and category, Krippendorff's α, pairwise Cohen's κ, costa vs humans — and the plot written as PNG.
Baseline, same run: a plain read of the same score rows from the store plus their mean (the floor any report pays).
Also: one score saved through the Campaign tab's path (`CampaignDesk.save`), median of 50, against one plain upsert.
What a process pays once whatever the size (importing the libraries, a first tiny report and plot) is measured
first and printed apart.
"""

from __future__ import annotations

import argparse
import csv
import random
import statistics
import tempfile
import time
from pathlib import Path

from costa.campaign.db import CampaignDb

HELP = "scoring and reporting a campaign of N items × E evaluators (target 1,000 × 3 in under 2 s)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--items", type=int, default=1000)
    p.add_argument("--evaluators", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)


def _setup(home: Path, n_items: int, n_eval: int, rng: random.Random) -> tuple[CampaignDb, str, list[str]]:
    import numpy as np
    from PIL import Image

    from costa.campaign.assign import assign
    from costa.campaign.conditions import parse_conditions
    from costa.campaign.records import Campaign, Item, Unit, item_id
    from costa.campaign.tasks import Task, TaskSet, TurnSpec
    from costa.store import Store

    image = home / "tiny.png"
    Image.fromarray(np.zeros((8, 8, 3), np.uint8)).save(image)
    conditions = parse_conditions("alpha=0,2")
    tasks = tuple(Task(f"t{k}", image, (TurnSpec("make it brighter"),)) for k in range(n_items // len(conditions)))
    name = "scale"
    evaluators = [f"e{k}" for k in range(n_eval)]
    campaign = Campaign(name, str(image), TaskSet(tasks, image), conditions, tuple(evaluators), n_eval, 0.0)
    items = [Item(item_id(name, t.id, c), name, n, t.id, c, "pending")
             for n, (t, c) in enumerate((t, c) for t in tasks for c in conditions)]  # fmt: skip
    store = Store(home)
    db = CampaignDb(store)
    db.create(campaign, items, assign([(i.id, i.condition.label) for i in items], evaluators, n_eval, name))
    session = store.create_session("campaign:scale")
    v = store.add_version(session.id, np.zeros((8, 8, 3), np.uint8), "upload", "tiny")
    kinds = ("object_removal", "object_recoloration", "text_replacement", "global_adjustment", "outpainting")
    verdicts = ("done", "done", "done", "proposed", "failed", "unverified")
    for it in items:  # FAKE runs: finished items with their subtasks, no tool ran
        db.start_item(it.id, session.id)
        units = [Unit(it.id, f"t1.s{k + 1}", k, 1, kinds[k % 5], kinds[k % 5].replace("_", " ").title(), "",
                      rng.choice(verdicts), v.id, v.id) for k in range(rng.randint(1, 5))]  # fmt: skip
        db.finish_item(it.id, units, rng.uniform(0.1, 30.0), rng.uniform(1.0, 40.0))
    return db, name, evaluators


def _sheet(db: CampaignDb, name: str, evaluators: list[str], path: Path, rng: random.Random) -> int:
    units = db.units(name)
    n = 0
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["item", "subtask", "evaluator", "score", "comment"])
        for u in units:
            truth = rng.randint(0, 10)
            for e in evaluators:
                w.writerow([u.item_id, u.unit, e, min(10, max(0, truth + rng.choice([-1, 0, 0, 1]))) / 10, ""])
                n += 1
    return n


def run(args: argparse.Namespace) -> int:
    from costa.errors import InputError

    if args.items < 2 or args.evaluators < 2:
        raise InputError("--items and --evaluators must be at least 2")
    imports = _warm_up()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="costa-bench-campaign-") as tmp:
        home = Path(tmp)
        db, name, evaluators = _setup(home, args.items, args.evaluators, rng)
        sheet = home / "scores.csv"
        n_scores = _sheet(db, name, evaluators, sheet, rng)
        timed, baseline = _time_report(db, name, sheet, home / "plot.png")
        save, upsert = _time_saves(db, name, evaluators[0])
        items = len(db.items(name))
    print(f"campaign scale: {items} items × {args.evaluators} evaluators, {n_scores} scores")
    print(f"  scored (import) + reported (tables, agreement, costa vs humans, plot): {timed:.3f} s (target < 2 s)")
    print(f"  baseline, a plain read of the same scores + their mean: {baseline:.3f} s (ratio {timed / baseline:.1f}x)")
    print(f"  one score saved through the Campaign tab's path: {save * 1000:.1f} ms "
          f"(a plain upsert {upsert * 1000:.1f} ms, ratio {save / upsert:.1f}x)")  # fmt: skip
    print(f"  one-off per process (importing krippendorff, scikit-learn, matplotlib and a first 2-score report): "
          f"{imports:.2f} s, not counted")  # fmt: skip
    print(f"  target: {'met' if timed < 2.0 else 'NOT met'}")
    return 0


def _warm_up() -> float:
    """Import the libraries and make one tiny report and plot: what any process pays once, whatever the size."""
    import io

    from costa.campaign.conditions import Condition
    from costa.campaign.records import Campaign, Item, Unit
    from costa.campaign.report import CampaignData, build_report, plot
    from costa.campaign.stats import ScoreRow
    from costa.campaign.tasks import TaskSet

    start = time.perf_counter()
    c = Condition()
    data = CampaignData(
        Campaign("w", "", TaskSet(()), (c,), ("a", "b"), 2, 0.0),
        [Item("i", "w", 0, "t", c, "done", "s", tool_seconds=1.0, turn_seconds=1.0)],
        [Unit("i", "u", 0, 1, "k", "K", "", "done", 1, 1), Unit("i", "v", 1, 1, "k", "K", "", "done", 1, 1)],
        [ScoreRow("i", "u", "a", 1.0), ScoreRow("i", "u", "b", 0.5), ScoreRow("i", "v", "a", 0.0),
         ScoreRow("i", "v", "b", 0.2)],
    )  # fmt: skip
    plot(build_report(data), io.BytesIO())
    return time.perf_counter() - start


def _time_report(db: CampaignDb, name: str, sheet: Path, plot_path: Path) -> tuple[float, float]:
    from costa.campaign.commands import read_score_sheet
    from costa.campaign.report import CampaignData, build_report, plot

    start = time.perf_counter()
    db.save_scores(name, read_score_sheet(sheet))
    data = CampaignData(db.campaign(name), db.items(name), db.units(name), db.scores(name))
    report = build_report(data)
    plot(report, plot_path)
    timed = time.perf_counter() - start
    start = time.perf_counter()
    rows = db.scores(name)
    statistics.fmean(r.score for r in rows)
    return timed, time.perf_counter() - start


def _time_saves(db: CampaignDb, name: str, evaluator: str) -> tuple[float, float]:
    from costa.campaign.desk import save_score
    from costa.campaign.stats import ScoreRow

    queue = db.queue_units(name, evaluator)[:50]
    saves, upserts = [], []
    for item, unit in queue:
        t = time.perf_counter()
        save_score(db, name, evaluator, item, unit, 0.5, "bench")
        saves.append(time.perf_counter() - t)
        t = time.perf_counter()
        db.save_scores(name, [ScoreRow(item, unit, evaluator, 0.6)])
        upserts.append(time.perf_counter() - t)
    return statistics.median(saves), statistics.median(upserts)
