"""Cross-turn memory rows (`costa.reflect.memory`): one JSON record per turn, accepted masks as packed bits."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from costa.store.core import Store


def save_memory(store: Store, session_id: str, turn_id: int, row: dict[str, Any]) -> None:
    """Save one turn's memory (`costa.reflect.memory.record_to_row`); masks go to their own table as packed bits."""
    record = {k: v for k, v in row.items() if k != "masks"}
    with store.connect(write=True) as db:
        db.execute(
            "INSERT INTO memory (session_id, turn_id, record) VALUES (?, ?, ?)"
            " ON CONFLICT (session_id, turn_id) DO UPDATE SET record = excluded.record",
            (session_id, int(turn_id), json.dumps(record)),
        )
        for sid, h, w, bits in row.get("masks", ()):
            db.execute(
                "INSERT INTO memory_masks (session_id, turn_id, subtask_id, height, width, bits)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (turn_id, subtask_id) DO UPDATE SET session_id ="
                " excluded.session_id, height = excluded.height, width = excluded.width, bits = excluded.bits",
                (session_id, int(turn_id), sid, h, w, bits),
            )


def load_memory(store: Store, session_id: str) -> list[dict[str, Any]]:
    """Every remembered turn of a session, oldest first, as rows for `costa.reflect.memory.record_from_row`."""
    with store.connect() as db:
        rows = db.all("SELECT turn_id, record FROM memory WHERE session_id = ? ORDER BY turn_id", (session_id,))
        masks = db.all(
            "SELECT turn_id, subtask_id, height, width, bits FROM memory_masks WHERE session_id = ?", (session_id,)
        )
    out = []
    for r in rows:
        d = json.loads(r["record"])
        d["masks"] = [
            (m["subtask_id"], m["height"], m["width"], bytes(m["bits"])) for m in masks if m["turn_id"] == r["turn_id"]
        ]
        out.append(d)
    return out
