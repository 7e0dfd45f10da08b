"""Campaign rows on each store backend (`store_database`: SQLite, then a throwaway PostgreSQL): a campaign and its
items, queues and units round-trip with their types; item states move as `run` moves them; scores are upserted, and
a file with one bad row saves nothing; a second process (another replica) sees what the first wrote."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from costa.campaign.assign import assign
from costa.campaign.conditions import parse_conditions
from costa.campaign.db import CampaignDb
from costa.campaign.records import Campaign, Item, Unit, item_id
from costa.campaign.stats import ScoreRow
from costa.campaign.tasks import parse_task_set
from costa.errors import InputError
from costa.store import Store
from costa.store.database import Database

TASKS = {
    "tasks": [
        {"id": "bright", "image": "ball.png", "turns": ["make the photo brighter"]},
        {"id": "two", "image": "ball.png", "turns": ["make it brighter", "make it black and white"]},
    ]
}


def new_campaign(db: CampaignDb, tmp_path: Path, name: str = "c1") -> tuple[Campaign, list[Item]]:
    tasks = parse_task_set(TASKS, tmp_path / "tasks.json", check_files=False)
    conditions = parse_conditions("alpha=0,2; reflect=off")
    campaign = Campaign(name, str(tmp_path / "tasks.json"), tasks, conditions, ("ann", "bob"), 2, 1700000000.5,
                        ("admin",))  # fmt: skip
    pairs = [(t, c) for t in tasks.tasks for c in conditions]
    items = [Item(item_id(name, t.id, c), name, n, t.id, c, "pending") for n, (t, c) in enumerate(pairs)]
    db.create(campaign, items, assign([(i.id, i.condition.label) for i in items], ["ann", "bob"], 2, seed=name))
    return campaign, items


def units_of(item: Item, turns: int) -> list[Unit]:
    return [
        Unit(item.id, f"t{k}.s1", k - 1, k, "global_adjustment", "Global Adjustment", f"turn {k}", "done", k, k + 1,
             "global_adjust", "box" if k == 1 else "none", "", ((3, 4, 50, 60, "ball"),) if k == 1 else ())
        for k in range(1, turns + 1)
    ]  # fmt: skip


def test_a_campaign_round_trips_with_its_items_and_queues(
    tmp_path: Path, store_database: Callable[[], Database]
) -> None:
    db = CampaignDb(Store(tmp_path, store_database()))
    campaign, items = new_campaign(db, tmp_path)
    with pytest.raises(InputError, match="exists already"):
        new_campaign(db, tmp_path)
    other = CampaignDb(Store(tmp_path, store_database()))  # another replica, reading what this one wrote
    got = other.campaign("c1")
    assert (got.name, got.evaluators, got.admins, got.overlap) == ("c1", ("ann", "bob"), ("admin",), 2)
    assert got.created == 1700000000.5 and isinstance(got.created, float) and isinstance(got.overlap, int)
    assert [t.id for t in got.tasks.tasks] == ["bright", "two"] and got.conditions == campaign.conditions
    assert other.names() == ["c1"]
    with pytest.raises(InputError, match="no campaign 'nope'; there are c1"):
        other.campaign("nope")
    stored = other.items("c1")
    assert [(i.id, i.position, i.task_id, i.condition, i.status) for i in stored] == [
        (i.id, i.position, i.task_id, i.condition, "pending") for i in items
    ]
    assert all(i.session_id is None and i.error == "" and i.started is None for i in stored)
    queues = other.assigned("c1")
    assert sorted(queues) == ["ann", "bob"] and all(sorted(q) == sorted(i.id for i in items) for q in queues.values())
    assert other.queue("c1", "ann") == []  # nothing finished yet: nothing to score


def test_item_states_move_as_a_run_moves_them(tmp_path: Path, store_database: Callable[[], Database]) -> None:
    db = CampaignDb(Store(tmp_path, store_database()))
    _, items = new_campaign(db, tmp_path)
    a, b, c, d = (i.id for i in items)
    db.start_item(a, "sess-a")
    db.start_item(b, "sess-b")
    db.start_item(c, "sess-c")
    db.fail_item(c, "x" * 3000)
    db.finish_item(a, units_of(items[0], 1), 1.25, 2.5)
    assert [i.status for i in db.items("c1")] == ["done", "running", "failed", "pending"]
    assert [i.id for i in db.items("c1", ("running", "pending"))] == [b, d]
    done, running, failed = db.item(a), db.item(b), db.item(c)
    assert (done.session_id, done.tool_seconds, done.turn_seconds) == ("sess-a", 1.25, 2.5)
    assert isinstance(done.started, float) and isinstance(done.finished, float) and done.finished >= done.started
    assert running.session_id == "sess-b" and len(failed.error) == 2000
    # a killed run left b running: the next run puts it back to pending, its half-made session abandoned
    assert CampaignDb(Store(tmp_path, store_database())).reset_running("c1") == 1
    again = db.item(b)
    assert (again.status, again.session_id, again.started) == ("pending", None, None)
    db.start_item(d, "sess-d")
    db.requeue_item(d)  # Ctrl-C part-way
    assert db.item(d).status == "pending" and db.item(d).session_id is None
    with pytest.raises(InputError, match="no campaign item 'i-none'"):
        db.item("i-none")


def test_units_keep_their_order_types_and_boxes_and_finishing_again_replaces_them(
    tmp_path: Path, store_database: Callable[[], Database]
) -> None:
    db = CampaignDb(Store(tmp_path, store_database()))
    _, items = new_campaign(db, tmp_path)
    two = next(i for i in items if i.task_id == "two")
    bright = next(i for i in items if i.task_id == "bright")
    db.finish_item(two.id, units_of(two, 2)[::-1], 0.5, 1.0)  # stored in any order, read in position order
    db.finish_item(bright.id, units_of(bright, 1), 0.1, 0.2)
    got = CampaignDb(Store(tmp_path, store_database())).item_units(two.id)
    assert got == units_of(two, 2)
    assert got[0].boxes == ((3, 4, 50, 60, "ball"),) and all(isinstance(v, int) for v in got[0].boxes[0][:4])
    assert isinstance(got[0].before_version, int) and isinstance(got[0].turn, int)
    assert [u.item_id for u in db.units("c1")] == [bright.id, two.id, two.id]  # item position, then unit position
    db.finish_item(two.id, units_of(two, 1), 0.5, 1.0)  # run again: its units replaced, not added
    assert [u.unit for u in db.item_units(two.id)] == ["t1.s1"]
    order = db.assigned("c1")["ann"]
    assert db.queue("c1", "ann") == [i for i in order if i in (two.id, bright.id)]
    assert [k for k in db.queue_units("c1", "ann")] == [
        (i, u.unit) for i in db.queue("c1", "ann") for u in db.item_units(i)
    ]


def test_scores_are_upserted_and_one_bad_row_saves_none(tmp_path: Path, store_database: Callable[[], Database]) -> None:
    db = CampaignDb(Store(tmp_path, store_database()))
    _, items = new_campaign(db, tmp_path)
    two = next(i for i in items if i.task_id == "two")
    db.finish_item(two.id, units_of(two, 2), 0.5, 1.0)
    rows = [ScoreRow(two.id, "t1.s1", "ann", 1.0, "ok"), ScoreRow(two.id, "t2.s1", "ann", 0.3),
            ScoreRow(two.id, "t1.s1", " bob ", 0.7, "fine")]  # fmt: skip
    assert db.save_scores("c1", rows) == 3
    assert db.save_scores("c1", [ScoreRow(two.id, "t1.s1", "ann", 0.4, "changed my mind")]) == 1
    other = CampaignDb(Store(tmp_path, store_database()))
    got = [(s.item, s.unit, s.evaluator, s.score, s.comment) for s in other.scores("c1")]
    assert got == [
        (two.id, "t1.s1", "ann", 0.4, "changed my mind"),
        (two.id, "t1.s1", "bob", 0.7, "fine"),
        (two.id, "t2.s1", "ann", 0.3, ""),
    ]
    assert all(isinstance(s.score, float) for s in other.scores("c1"))
    assert [s.unit for s in other.scores("c1", "ann")] == ["t1.s1", "t2.s1"]
    unfinished = next(i for i in items if i.task_id == "bright")
    for bad, message in [
        (ScoreRow(unfinished.id, "t1.s1", "ann", 1.0), "has no finished item"),
        (ScoreRow(two.id, "t1.s1", "ann", 0.55), "is not 0 \\(fail\\)"),
        (ScoreRow(two.id, "t1.s1", "  ", 1.0), "the evaluator is empty"),
    ]:
        with pytest.raises(InputError, match=message):
            db.save_scores("c1", [ScoreRow(two.id, "t2.s1", "ann", 1.0), bad])
    assert [(s.unit, s.evaluator, s.score) for s in db.scores("c1", "ann")] == [("t1.s1", "ann", 0.4),
                                                                                  ("t2.s1", "ann", 0.3)]  # fmt: skip
