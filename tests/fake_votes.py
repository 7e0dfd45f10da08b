"""FAKE for tests: a reflection votes table in which every expert's every dimension votes for every subtask kind.

The shipped `tool_tables/reflection_votes.csv` holds what the real-photo suite measured, and on that evidence almost
no expert separates right from wrong, so reflection is advisory nearly everywhere. The synthetic scenes most tests
draw say nothing about real photos; tests of reflection's own mechanics (retry actions, best-of, the aggregator)
need experts that vote, so `tests/conftest.py` points `COSTA_REFLECTION_VOTES` at this FAKE table (source "fake",
AUC 1.0). Tests of the gating itself use the shipped table or their own. Never used outside tests.
"""

from __future__ import annotations

from pathlib import Path

from costa.reflect.protocol import DIMENSIONS, load_protocol
from costa.reflect.votes import VoteRow, format_votes
from costa.tables import load_tables

FAKE_NOTE = "FAKE for tests (tests/fake_votes.py): every dimension votes everywhere; not real-photo evidence."


def fake_votes_text() -> str:
    """The FAKE table's text: one voting row per (expert of the shipped protocol, dimension it judges, kind); VLM
    experts may judge every dimension."""
    protocol = load_protocol()
    kinds = sorted(load_tables().subtasks)
    experts = [(e.name, e.judges) for e in protocol.offline] + [(r.name, DIMENSIONS) for r in protocol.vlm_roles]
    rows = [VoteRow(name, dim, kind, 100, 50, 1.0, "fake") for name, dims in experts for dim in dims for kind in kinds]
    return format_votes(0.75, 8, rows, FAKE_NOTE)


def write_fake_votes(path: Path) -> Path:
    """Write the FAKE table to `path` (its folder is made); returns `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(fake_votes_text(), encoding="utf-8")
    return path
