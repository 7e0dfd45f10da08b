"""People's verdicts flow on (issue 18 part 2): into the learned estimates and FaSTA*'s observations (relabelling the
run the search recorded, never counting it twice), into the evaluator's rows and CSV, and Refine in the session core.

A FAKE calibration table (costa/testing/calibration.py) that cannot vouch for recolouring makes the drawn disc's
recolouring a proposal in every mode; everything else is real (the tools, the checks, the store).
"""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from costa.errors import InputError
from costa.store import Store
from costa.store.proposals import session_proposals, verdicts
from costa.types import Mask
from tests.proposing import BOX, edit, proposing_core

ROOT = Path(__file__).resolve().parents[1]


def test_accept_and_discard_relabel_the_run_the_search_observed_without_counting_it_again(tmp_path: Path) -> None:
    core, sid = proposing_core(tmp_path)
    est = core.services.estimates
    edit(core, sid, "make the object blue", box=BOX)
    (sub,) = core.proposals.pending(sid, None).subtasks  # type: ignore[union-attr]
    key = (sub.tool, sub.kind)
    assert sub.quality is not None and 0.8 <= sub.quality <= 1.0  # the check quality the search recorded
    runs, seconds, q = est._obs[key]
    (v,) = core.proposals.accept(sid, None).verdicts
    assert (v.verdict, v.quality, v.machine) == ("accepted", sub.quality, None)  # lazy: in memory only
    assert est._obs[key] == (runs, seconds, pytest.approx(q + 1.0 - sub.quality))  # relabelled: 1.0, same count
    edit(core, sid, "make the object green", box=BOX)
    (sub2,) = core.proposals.pending(sid, None).subtasks  # type: ignore[union-attr]
    runs2, _, q2 = est._obs[(sub2.tool, sub2.kind)]
    before = est.get(sub2.tool, sub2.kind)[1]
    core.proposals.discard(sid, None)
    assert est._obs[(sub2.tool, sub2.kind)][0] == runs2  # no run added
    assert est._obs[(sub2.tool, sub2.kind)][2] == pytest.approx(q2 - sub2.quality)  # that run now counts 0.0
    assert est.get(sub2.tool, sub2.kind)[1] < before  # the next search expects less of that tool here
    core.close()


def test_a_discarded_fast_slow_proposal_relabels_its_stored_run_and_fails_its_trace(tmp_path: Path) -> None:
    from costa.subroutines.observations import ObservationLog, StoredEstimates, machine_kind

    core, sid = proposing_core(tmp_path)
    view = edit(core, sid, "make the object blue", "fast-slow", box=BOX)
    assert view.status == "proposed"  # type: ignore[attr-defined]
    (sub,) = core.proposals.pending(sid, None).subtasks  # type: ignore[union-attr]
    log = ObservationLog(core.store)
    key = (sub.tool, sub.kind)
    n, _, q = log.aggregates()[key]
    traces = [t for t in log.traces(sub.kind) if t.path[-1] == sub.tool]
    assert [t.success for t in traces] == [True] and traces[0].task == f"turn-{view.turn_id}"  # type: ignore[attr-defined]
    (v,) = core.proposals.discard(sid, None).verdicts
    assert v.machine == machine_kind() and v.quality == sub.quality
    n2, _, q2 = log.aggregates()[key]  # what the next process's StoredEstimates load
    assert n2 == n and q2 == pytest.approx(q - sub.quality)
    fresh = StoredEstimates(core.services.tables, log=log)
    assert fresh._obs[key][2] == pytest.approx(q2)
    assert core.fast_slow().estimates._obs[key][2] == pytest.approx(q2)  # this process's runtime, relabelled too
    (t,) = [t for t in log.traces(sub.kind) if t.path[-1] == sub.tool]
    assert not t.success and t.reason == "discarded by a person"  # induction learns no rule from it
    core.close()


def test_the_evaluator_rows_and_csv_list_each_proposal_with_its_verdict(tmp_path: Path) -> None:
    core, sid = proposing_core(tmp_path)
    edit(core, sid, "make the object blue", box=BOX)
    core.proposals.accept(sid, None)
    edit(core, sid, "make the object green", box=BOX)
    core.proposals.discard(sid, None)
    edit(core, sid, "make the object yellow", box=BOX)  # still pending
    rows = core.proposals.rows(sid, None)
    assert [(r.turn_number, r.verdict) for r in rows] == [(1, "accepted"), (2, "discarded"), (3, "pending")]
    assert rows[0].when is not None and rows[2].when is None and rows[0].tool.startswith("recolor_")
    assert "on flat graphics (medium region, box)" in rows[0].context
    with pytest.raises(InputError):
        core.proposals.rows(sid, "mallory")  # not hers
    table = list(csv.DictReader(io.StringIO(core.versions.scores_csv(sid, None).read_text())))
    got = [(r["record"], r["turn_id"], r["verdict"], bool(r["created"])) for r in table]
    ids = [r.turn_id for r in rows]
    assert got == [("verdict", str(ids[0]), "accepted", True), ("verdict", str(ids[1]), "discarded", True),
                   ("verdict", str(ids[2]), "pending", False)]  # fmt: skip
    assert "no real-photo evidence" in table[0]["reason"] and table[0]["instruction"] == "make the object blue"
    core.close()


def test_refine_runs_the_proposal_again_with_new_pointing_and_records_it_refined(tmp_path: Path) -> None:
    core, sid = proposing_core(tmp_path)
    with pytest.raises(InputError, match="nothing to refine"):
        core.proposals.refining(sid, None, ((), "", None))
    first = edit(core, sid, "make the object blue", box=BOX)
    with pytest.raises(InputError, match="add a brush, more clicks or a box"):
        core.proposals.refining(sid, None, ((), "", None))  # no pointing at all
    with pytest.raises(InputError, match="add a brush, more clicks or a box"):
        core.proposals.refining(sid, None, ((), BOX, None))  # the same box again: nothing would differ
    pending = core.proposals.pending(sid, None)
    assert pending is not None and pending.status == "pending"  # refused: unchanged
    brush = np.zeros((72, 96), bool)
    yy, xx = np.mgrid[:72, :96]
    brush[(yy - 36) ** 2 + (xx - 48) ** 2 < 16**2] = True
    text = core.proposals.refining(sid, None, ((), "", Mask(brush))).instruction
    assert text == "make the object blue"
    again = edit(core, sid, text, brush=Mask(brush), action="refine")
    assert again.status == "proposed"  # type: ignore[attr-defined]  # judged like any turn (still no evidence)
    old, new = session_proposals(core.store, sid)
    assert (old.status, old.refined_by, new.status) == ("refined", again.turn_id, "pending")  # type: ignore[attr-defined]
    assert old.turn_id == first.turn_id and new.subtasks[0].pointing == "brush"  # type: ignore[attr-defined]
    (v,) = verdicts(core.store, sid)
    assert v.verdict == "refined" and v.right is None
    assert [r.verdict for r in core.proposals.rows(sid, None)] == ["refined", "pending"]
    assert [ver.kind for ver in core.store.versions(sid)] == ["upload"]  # nothing saved by refining
    core.proposals.accept(sid, None)  # the refined run's result, accepted
    assert [ver.kind for ver in core.store.versions(sid)] == ["upload", "turn"]
    core.close()


def test_a_refine_with_nothing_pending_is_refused_before_a_turn_is_stored(tmp_path: Path) -> None:
    core, sid = proposing_core(tmp_path)
    turns = len(core.store.turns(sid))
    with pytest.raises(InputError, match="nothing to refine"):
        edit(core, sid, "make the object blue", box=BOX, action="refine")
    assert len(core.store.turns(sid)) == turns and not core.busy(sid)
    core.close()


# ------------------------------------------------------------------------------ verdicts in `bench real --write`


def _bench_real(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COSTA_HOME": str(home), "PYTHONPATH": str(ROOT)}
    env.setdefault("COSTA_BENCHMARKS_DIR", "/nonexistent")  # scikit-image's photos when the benchmarks are absent
    cmd = [sys.executable, "-m", "costa", "bench", "real", "--dev", "--kinds", "adjust", "--n", "1", "--seed", "3"]
    return subprocess.run([*cmd, *args], env=env, capture_output=True, text=True, timeout=600, cwd=ROOT)


def test_bench_real_write_counts_a_homes_verdicts_only_when_asked(tmp_path: Path) -> None:
    """Through `python -m costa bench real`: a home with one accepted, one discarded and one refined proposal.
    `--write` alone ignores them (the shipped table is the bench's alone); `--write --verdicts` counts the accept as
    right and the discard as wrong in their context (the refine is no case) and writes the home's own table."""
    from costa.calibration import CALIBRATION_FILE, StepContext, load_calibration

    core, sid = proposing_core(tmp_path)
    home = tmp_path / "s"  # the store the session core wrote: a home whose verdicts the bench may read
    edit(core, sid, "make the object blue", box=BOX)
    core.proposals.accept(sid, None)
    edit(core, sid, "make the object green", box=BOX)
    core.proposals.discard(sid, None)
    edit(core, sid, "make the object yellow", box=BOX)
    edit(core, sid, "make the object yellow", box="24,12,48,48", action="refine")
    core.close()
    (v,) = {(x.kind, x.tool, x.content, x.region, x.pointing) for x in verdicts(Store(home)) if x.right is not None}
    ctx = StepContext(*v)
    shipped = CALIBRATION_FILE.read_text()

    alone = tmp_path / "alone.csv"
    r = _bench_real(home, "--write", "--out", str(alone))
    assert r.returncode == 0, r.stdout + r.stderr
    assert CALIBRATION_FILE.read_text() == shipped  # --out: the shipped table untouched
    assert ctx not in load_calibration(alone).rows and "alone (no person verdicts)" in alone.read_text()

    r = _bench_real(home, "--write", "--verdicts", str(home))
    assert r.returncode == 0, r.stdout + r.stderr
    mine = home / "calibration.csv"  # the home's own table, not the shipped one
    assert CALIBRATION_FILE.read_text() == shipped and f"COSTA_CALIBRATION_TABLE={mine}" in r.stdout
    row = load_calibration(mine).rows[ctx]
    assert (row.cases, row.right, row.source) == (2, 1, "person")  # accepted right, discarded wrong, refined none
    assert f"2 person verdicts from {home}" in mine.read_text()
    bench_rows = {c for c, x in load_calibration(alone).rows.items() if x.source == "bench"}
    assert bench_rows <= set(load_calibration(mine).rows)  # the bench's cases are in both

    r = _bench_real(home, "--verdicts")
    assert r.returncode != 0 and "add --write" in r.stderr
