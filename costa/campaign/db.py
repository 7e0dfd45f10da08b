"""A campaign's rows in the one store (tables of migration `_m7_campaigns`): every query of `costa.campaign` is here.

Writes are short transactions; a finished item's units and its status commit together, so a killed `run` leaves an
item either finished with all its units or still to run. Scores are upserted: an evaluator who goes back and
changes a score replaces their earlier one.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from costa.campaign.conditions import Condition
from costa.campaign.records import Campaign, Item, Unit, check_name
from costa.campaign.stats import ScoreRow
from costa.campaign.tasks import parse_task_set
from costa.errors import InputError
from costa.store import SCORE_LEVELS, Store

UNIT_COLUMNS = (
    "item_id, unit, position, turn, kind, category, description, verdict, before_version, after_version, tool,"
    " pointing, answer, boxes"
)


def _item(r: Mapping[str, Any]) -> Item:
    return Item(
        r["id"],
        r["campaign"],
        r["position"],
        r["task_id"],
        Condition.from_dict(json.loads(r["options"])),
        r["status"],
        r["session_id"],
        r["error"],
        r["tool_seconds"],
        r["turn_seconds"],
        r["started"],
        r["finished"],
    )


def _unit(r: Mapping[str, Any]) -> Unit:
    values = {k.strip(): r[k.strip()] for k in UNIT_COLUMNS.split(",")}
    values["boxes"] = tuple(
        (int(x), int(y), int(w), int(h), str(label)) for x, y, w, h, label in json.loads(values["boxes"])
    )
    return Unit(**values)


def _unit_row(u: Unit) -> tuple[Any, ...]:
    return tuple(
        json.dumps(u.boxes) if k.strip() == "boxes" else getattr(u, k.strip()) for k in UNIT_COLUMNS.split(",")
    )


class CampaignDb:
    """Campaign rows of one `Store` (no connection of its own: every query goes through the store's)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._campaigns: dict[str, Campaign] = {}  # a campaign's row never changes once created

    # ---------------------------------------------------------------------------------------------- campaigns

    def create(self, campaign: Campaign, items: Sequence[Item], queues: Mapping[str, Sequence[str]]) -> None:
        """Store a new campaign with its items (pending) and evaluator queues, all at once.

        Raises:
            InputError: a campaign of that name exists.
        """
        tasks = json.dumps(campaign.tasks.to_dict())
        with self.store.connect(write=True) as db:
            if db.one("SELECT 1 FROM campaigns WHERE name = ?", (campaign.name,)):
                raise InputError(f"campaign {campaign.name!r} exists already: choose another name")
            db.execute(
                "INSERT INTO campaigns (name, created, task_file, tasks, conditions, evaluators, admins, overlap)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    campaign.name,
                    campaign.created,
                    campaign.task_file,
                    tasks,
                    json.dumps([c.as_dict() for c in campaign.conditions]),
                    json.dumps(list(campaign.evaluators)),
                    json.dumps(list(campaign.admins)),
                    campaign.overlap,
                ),
            )
            db.executemany(
                "INSERT INTO campaign_items (id, campaign, position, task_id, options, status)"
                " VALUES (?, ?, ?, ?, ?, 'pending')",
                [(i.id, campaign.name, i.position, i.task_id, json.dumps(i.condition.as_dict())) for i in items],
            )
            db.executemany(
                "INSERT INTO campaign_assignments (campaign, item_id, evaluator, position) VALUES (?, ?, ?, ?)",
                [(campaign.name, iid, ev, n) for ev, queue in queues.items() for n, iid in enumerate(queue)],
            )

    def campaign(self, name: str) -> Campaign:
        """The campaign called `name`.

        Raises:
            InputError: no such campaign (the message lists the ones there are).
        """
        check_name(name)
        if name in self._campaigns:
            return self._campaigns[name]
        with self.store.connect() as db:
            r = db.one("SELECT * FROM campaigns WHERE name = ?", (name,))
        if r is None:
            known = self.names()
            raise InputError(f"no campaign {name!r}" + (f"; there are {', '.join(known)}" if known else ""))
        tasks = parse_task_set(json.loads(r["tasks"]), Path(r["task_file"]), check_files=False)
        conditions = tuple(Condition.from_dict(c) for c in json.loads(r["conditions"]))
        evaluators, admins = tuple(json.loads(r["evaluators"])), tuple(json.loads(r["admins"]))
        campaign = Campaign(
            r["name"], r["task_file"], tasks, conditions, evaluators, r["overlap"], r["created"], admins
        )
        self._campaigns[name] = campaign
        return campaign

    def names(self) -> list[str]:
        with self.store.connect() as db:
            return [r["name"] for r in db.all("SELECT name FROM campaigns ORDER BY created")]

    # -------------------------------------------------------------------------------------------------- items

    def items(self, name: str, statuses: Sequence[str] = ()) -> list[Item]:
        sql, params = "SELECT * FROM campaign_items WHERE campaign = ?", [name]
        if statuses:
            sql += f" AND status IN ({', '.join('?' for _ in statuses)})"
            params.extend(statuses)
        with self.store.connect() as db:
            return [_item(r) for r in db.all(sql + " ORDER BY position", params)]

    def item(self, item_id: str) -> Item:
        with self.store.connect() as db:
            r = db.one("SELECT * FROM campaign_items WHERE id = ?", (item_id,))
        if r is None:
            raise InputError(f"no campaign item {item_id!r}")
        return _item(r)

    def reset_running(self, name: str) -> int:
        """Items a killed run left `running` go back to `pending` (their half-made sessions are abandoned)."""
        with self.store.connect(write=True) as db:
            n = db.one("SELECT COUNT(*) AS n FROM campaign_items WHERE campaign = ? AND status = 'running'", (name,))
            db.execute(
                "UPDATE campaign_items SET status = 'pending', session_id = NULL, started = NULL"
                " WHERE campaign = ? AND status = 'running'",
                (name,),
            )
            return int(n["n"])

    def start_item(self, item_id: str, session_id: str) -> None:
        with self.store.connect(write=True) as db:
            db.execute(
                "UPDATE campaign_items SET status = 'running', session_id = ?, started = ?, error = '' WHERE id = ?",
                (session_id, time.time(), item_id),
            )

    def requeue_item(self, item_id: str) -> None:
        """An item stopped part-way (Ctrl-C) is run again from the start next time."""
        with self.store.connect(write=True) as db:
            db.execute(
                "UPDATE campaign_items SET status = 'pending', session_id = NULL, started = NULL WHERE id = ?",
                (item_id,),
            )

    def fail_item(self, item_id: str, error: str) -> None:
        with self.store.connect(write=True) as db:
            db.execute(
                "UPDATE campaign_items SET status = 'failed', error = ?, finished = ? WHERE id = ?",
                (error[:2000], time.time(), item_id),
            )

    def finish_item(self, item_id: str, units: Sequence[Unit], tool_seconds: float, turn_seconds: float) -> None:
        """Record a finished item: its units and its costs, in one transaction."""
        marks = ", ".join("?" for _ in UNIT_COLUMNS.split(","))
        with self.store.connect(write=True) as db:
            db.execute("DELETE FROM campaign_units WHERE item_id = ?", (item_id,))
            db.executemany(
                f"INSERT INTO campaign_units ({UNIT_COLUMNS}) VALUES ({marks})",
                [_unit_row(u) for u in units],
            )
            db.execute(
                "UPDATE campaign_items SET status = 'done', tool_seconds = ?, turn_seconds = ?, finished = ?,"
                " error = '' WHERE id = ?",
                (tool_seconds, turn_seconds, time.time(), item_id),
            )

    def units(self, name: str) -> list[Unit]:
        with self.store.connect() as db:
            rows = db.all(
                f"SELECT {', '.join('u.' + k.strip() for k in UNIT_COLUMNS.split(','))} FROM campaign_units u"
                " JOIN campaign_items i ON i.id = u.item_id WHERE i.campaign = ? ORDER BY i.position, u.position",
                (name,),
            )
        return [_unit(r) for r in rows]

    def item_units(self, item_id: str) -> list[Unit]:
        with self.store.connect() as db:
            rows = db.all(f"SELECT {UNIT_COLUMNS} FROM campaign_units WHERE item_id = ? ORDER BY position", (item_id,))
        return [_unit(r) for r in rows]

    # ------------------------------------------------------------------------------------------ assignments

    def queue(self, name: str, evaluator: str) -> list[str]:
        """The evaluator's finished items, in their own order (items not run yet are not shown)."""
        with self.store.connect() as db:
            rows = db.all(
                "SELECT a.item_id FROM campaign_assignments a JOIN campaign_items i ON i.id = a.item_id"
                " WHERE a.campaign = ? AND a.evaluator = ? AND i.status = 'done' ORDER BY a.position",
                (name, evaluator),
            )
        return [r["item_id"] for r in rows]

    def queue_units(self, name: str, evaluator: str) -> list[tuple[str, str]]:
        """(item id, unit) of the evaluator's finished items, item by item in their order, subtasks in turn order."""
        with self.store.connect() as db:
            rows = db.all(
                "SELECT u.item_id, u.unit FROM campaign_assignments a JOIN campaign_items i ON i.id = a.item_id"
                " JOIN campaign_units u ON u.item_id = a.item_id"
                " WHERE a.campaign = ? AND a.evaluator = ? AND i.status = 'done' ORDER BY a.position, u.position",
                (name, evaluator),
            )
        return [(r["item_id"], r["unit"]) for r in rows]

    def assigned(self, name: str) -> dict[str, list[str]]:
        """evaluator → every item assigned to them (run or not), in their order."""
        out: dict[str, list[str]] = {}
        with self.store.connect() as db:
            rows = db.all(
                "SELECT evaluator, item_id FROM campaign_assignments WHERE campaign = ? ORDER BY evaluator, position",
                (name,),
            )
        for r in rows:
            out.setdefault(r["evaluator"], []).append(r["item_id"])
        return out

    # ------------------------------------------------------------------------------------------------ scores

    def save_scores(self, name: str, rows: Sequence[ScoreRow]) -> int:
        """Upsert scores (one transaction); every row must name a unit of a finished item of this campaign.

        Raises:
            InputError: an unknown item or subtask, or a score not in {0, 0.1 … 0.9, 1}; nothing is saved then.
        """
        with self.store.connect(write=True) as db:
            known = {
                (r["item_id"], r["unit"])
                for r in db.all(
                    "SELECT u.item_id, u.unit FROM campaign_units u JOIN campaign_items i ON i.id = u.item_id"
                    " WHERE i.campaign = ? AND i.status = 'done'",
                    (name,),
                )
            }
            now = time.time()
            values = []
            for n, s in enumerate(rows, 1):
                if (s.item, s.unit) not in known:
                    raise InputError(f"score {n}: campaign {name!r} has no finished item {s.item!r} with subtask "
                                     f"{s.unit!r}")  # fmt: skip
                if round(s.score, 3) not in SCORE_LEVELS:
                    raise InputError(f"score {n}: {s.score!r} is not 0 (fail), 0.1 … 0.9 (partial) or 1 (full)")
                if not s.evaluator.strip():
                    raise InputError(f"score {n}: the evaluator is empty")
                values.append((name, s.item, s.unit, s.evaluator.strip(), round(s.score, 1), s.comment, now))
            db.executemany(
                "INSERT INTO campaign_scores (campaign, item_id, unit, evaluator, score, comment, created)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (item_id, unit, evaluator) DO UPDATE SET"
                " score = excluded.score, comment = excluded.comment, created = excluded.created",
                values,
            )
        return len(values)

    def scores(self, name: str, evaluator: str | None = None) -> list[ScoreRow]:
        sql, params = "SELECT * FROM campaign_scores WHERE campaign = ?", [name]
        if evaluator is not None:
            sql += " AND evaluator = ?"
            params.append(evaluator)
        with self.store.connect() as db:
            rows = db.all(sql + " ORDER BY item_id, unit, evaluator", params)
        return [ScoreRow(r["item_id"], r["unit"], r["evaluator"], r["score"], r["comment"]) for r in rows]
