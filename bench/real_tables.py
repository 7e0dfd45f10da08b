"""What `bench real --write` writes: the real-photo calibration and the reflection votes (issue 18 parts 2 and 6).

**Reproducible by default.** `--write` regenerates the shipped `tool_tables/calibration.csv` from the suite's dev
part alone: the same code, photos and seed give the same table on any machine, whatever a home's store holds.

**A home's verdicts only when asked.** `--verdicts [DIR]` adds people's Accept / Discard verdicts from the store
under DIR (default COSTA_HOME) as labelled real cases in their context — an accept right, a discard wrong, a refine
no case (it judges the pointing, not the tool) — and such a table goes to that home (`DIR/calibration.csv`) unless
`--out` names another file; the costa of that home uses it with COSTA_CALIBRATION_TABLE. Every row's `source` says
where its cases came from (bench, person, bench+person) and the header comment counts both, so a table written with
verdicts can never pass for the bench's. The reflection votes come from the bench alone and are written only with
the shipped calibration (a table for one home leaves the shipped votes untouched).
"""

from __future__ import annotations

import argparse
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from costa.calibration import StepContext

#: A verdict's label as a real case: right (accept) or wrong (discard); a refine is no case.
LABELS = {"accepted": True, "discarded": False}


@dataclass(frozen=True)
class PersonCase:
    """One person's verdict as a labelled real case: its context and whether the proposal was right."""

    context: StepContext
    right: bool


def calibration_rows(steps: Sequence[Any], verdicts: Sequence[PersonCase] = ()) -> list[Any]:
    """Calibration rows per context from the dev steps (`bench.real.StepRun`) whose checks all passed (verified or
    proposed) and from people's verdicts (`PersonCase`)."""
    from costa.calibration import CalibrationRow

    counts: dict[StepContext, list[int]] = {}
    sources: dict[StepContext, set[str]] = {}
    for s in steps:
        if s.claim not in ("verified", "proposed") or not s.kind or not s.tool or not s.judged:
            continue
        ctx = StepContext(s.kind, s.tool, s.content, s.region, s.pointing)
        c = counts.setdefault(ctx, [0, 0])
        c[0] += 1
        c[1] += int(s.right)
        sources.setdefault(ctx, set()).add("bench")
    for v in verdicts:
        c = counts.setdefault(v.context, [0, 0])
        c[0] += 1
        c[1] += int(v.right)
        sources.setdefault(v.context, set()).add("person")
    rows = []
    for ctx, (n, right) in counts.items():
        src = sources[ctx]
        rows.append(CalibrationRow(ctx, n, right, "bench+person" if len(src) == 2 else next(iter(src))))
    return rows


def votes_rows(steps: Sequence[Any]) -> list[Any]:
    """Per (expert, dimension, subtask kind): how many judged dev results it scored, how many were right, and the
    AUC of its score separating them (`costa.reflect.votes`), from the steps reflection judged (verified or
    proposed). Expert means and the aggregate are reported, not written: only dimensions vote."""
    from bench.real import auc
    from costa.reflect.votes import VoteRow

    pairs: dict[tuple[str, str, str], list[tuple[float, bool]]] = {}
    for s in steps:
        if s.claim not in ("verified", "proposed") or not s.kind or not s.judged:
            continue
        for (expert, dim), score in s.experts.items():
            if dim != "mean" and expert != "aggregate":
                pairs.setdefault((expert, dim, s.kind), []).append((score, s.right))
    rows = []
    for (expert, dim, kind), got in pairs.items():
        a = auc([g[0] for g in got], [g[1] for g in got])
        rows.append(VoteRow(expert, dim, kind, len(got), sum(g[1] for g in got), a, "bench"))
    return rows


def person_verdicts(home: Path) -> list[PersonCase]:
    """People's verdicts as labelled cases, from the store under `home`, read-only (the bench never creates or
    migrates a home's store): their Accept / Discard of proposals (the `verdicts` table, migration 8; refines are
    no cases), and the evaluators' scores of a campaign's subtasks whose steps passed costa's checks (done or
    proposed: the cases a calibration's precision counts; right when the evaluators' mean reaches 0.8)."""
    from costa.store.migrations import MIGRATIONS

    db = Path(home) / "costa.db"
    if not db.is_file():
        return []
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        names = {r[0] for r in con.execute("select name from sqlite_master where type='table'")}
        rows = []
        if "verdicts" in names:
            rows = con.execute(
                "select kind, tool, content, region, pointing, verdict from verdicts order by id"
            ).fetchall()
        scored = "campaign_scores" in names and con.execute("select count(*) from campaign_scores").fetchone()[0] > 0
        current = con.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    finally:
        con.close()
    cases = [PersonCase(StepContext(*r[:5]), LABELS[str(r[5])]) for r in rows if str(r[5]) in LABELS]
    if scored and current:  # opening the store needs no migration: its schema is this costa's
        from costa.campaign.verdicts import human_verdicts
        from costa.store import Store

        for v in human_verdicts(Store(home)):
            if v.passed_checks and v.tool:
                cases.append(PersonCase(StepContext(v.kind, v.tool, v.content, v.region, v.pointing), v.right))
    return cases


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The writing options of `bench real`."""
    p.add_argument("--write", action="store_true", help="regenerate the calibration table from the dev part")
    p.add_argument(
        "--verdicts", nargs="?", const="", default=None, metavar="DIR",
        help="also count people's Accept / Discard verdicts from the store under DIR (default COSTA_HOME) as labelled "
        "real cases; with --write the table then goes to DIR/calibration.csv unless --out says otherwise",
    )  # fmt: skip
    p.add_argument("--out", default="", help="write the calibration table here (default: the shipped table)")


def verdicts_home(args: argparse.Namespace) -> Path | None:
    """The home whose verdicts count (None: the bench alone)."""
    if args.verdicts is None:
        return None
    if args.verdicts:
        return Path(args.verdicts).expanduser()
    from costa.config import Settings

    return Settings.from_env().home


def rewritten_kinds(suite_kinds: Sequence[str]) -> frozenset[str] | None:
    """The subtask kinds a `--write --kinds …` run regenerates (None: every kind, the whole table). A multi-step
    case's subtasks belong to their own kinds: "multi" regenerates removal, adjustment and extension rows."""
    from bench.real import STEP_KINDS

    if not suite_kinds:
        return None
    steps = {"removal", "adjust", "outpaint"} if "multi" in suite_kinds else set()
    steps |= {k for k in suite_kinds if k != "multi"}
    return frozenset(kind for step in steps for kind in STEP_KINDS[step])


def _note(path: Path) -> str:
    """A written table's note: its comment line saying what its rows rest on ("From N dev cases …"), or ""."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# From "):
            return line[2:]
    return ""


def _merged_note(old: str, kinds: frozenset[str], new: str) -> str:
    """What a partly rewritten table rests on: its old note, then the kinds this run rewrote and from what."""
    return f"{old} Then {', '.join(sorted(kinds))} rewritten {new[0].lower()}{new[1:]}".strip()


def write_tables(steps: Sequence[Any], n_cases: int, args: argparse.Namespace) -> Path:
    """Write the calibration table (where `args` say) and, with the shipped one, the reflection votes; return the
    calibration's path. With `--kinds`, the shipped table's rows of those kinds are regenerated and every other
    kind's rows kept as the table had them (the note says which kinds this run rewrote from what); a table with a
    home's verdicts or written with `--out` is always the run's own."""
    from costa.calibration import CALIBRATION_FILE, format_calibration, load_calibration

    home = verdicts_home(args)
    verdicts = person_verdicts(home) if home is not None else []
    out = Path(args.out).expanduser() if args.out else (home / "calibration.csv" if home else CALIBRATION_FILE)
    # Only the shipped table is rewritten in part: a home's table (or one written elsewhere) is always the run's own,
    # so a person's verdict is never counted twice or dropped by a partial run.
    partial = out.resolve() == CALIBRATION_FILE.resolve() and home is None
    kinds = rewritten_kinds([k for k in args.kinds.split(",") if k]) if partial else None
    old = load_calibration()
    rows = calibration_rows(steps, verdicts)
    where = f"and {len(verdicts)} person verdicts from {home}" if home is not None else "alone (no person verdicts)"
    note = f"From {n_cases} dev cases ({len(steps)} subtasks) {where}."
    if kinds is not None:
        rows += [r for c, r in old.rows.items() if c.kind not in kinds]
        note = _merged_note(_note(CALIBRATION_FILE), kinds, note)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(format_calibration(old.min_cases, rows, note), encoding="utf-8")
    print(f"wrote {out} ({len(rows)} contexts; {note})")
    if out.resolve() == CALIBRATION_FILE.resolve():
        write_votes(steps, n_cases, kinds)
    else:
        print(
            f"reflection votes not written (they go with the shipped table); use it here: COSTA_CALIBRATION_TABLE={out}"
        )
    return out


def write_votes(steps: Sequence[Any], n_cases: int, kinds: frozenset[str] | None = None) -> None:
    """Regenerate tool_tables/reflection_votes.csv from the dev steps, keeping the table's bars (and, when `kinds`
    is given, the rows of every other kind)."""
    from costa.reflect.votes import VOTES_FILE, format_votes, load_votes

    old = load_votes()
    rows = votes_rows(steps)
    note = f"From {n_cases} dev cases ({len(steps)} subtasks)."
    if kinds is not None:
        rows += [r for r in old.rows.values() if r.kind not in kinds]
        note = _merged_note(_note(VOTES_FILE), kinds, note)
    voting = [r for r in rows if old.vote(r.expert, r.dimension, r.kind).votes]
    VOTES_FILE.write_text(format_votes(old.min_auc, old.min_each, rows, note), encoding="utf-8")
    print(f"wrote {VOTES_FILE} ({len(rows)} rows, {len(voting)} voting; {note})")
