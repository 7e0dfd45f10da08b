"""Which reflection experts get a vote: only dimensions whose scores separate right from wrong on real photos.

An expert's dimension is evidence only as far as its scores have been measured against the truth. The real-photo
suite (`python -m costa bench real --write`) records, per expert, dimension and subtask kind, how many judged real
results it scored (`n`), how many of them were right (`right`), and the AUC of its score separating right from wrong
(the chance that a right result scores above a wrong one; 0.5 is a coin). `tool_tables/reflection_votes.csv` holds
those rows. A dimension **votes** for a kind only where its row has at least `min_each` right and `min_each` wrong
results and an AUC of at least `min_auc` (both in the table's header comment; 0.75 is issue 18's bar): measured on
the suite's dev part, a preservation score of 0.27 ranked the wrong removals (the neighbour removed, the whole box
repainted) above the right ones, and a 9–10 on a headless astronaut was a defect. Anywhere else the dimension's
score is shown to the user but never used: it neither accepts, nor retries, nor enters the aggregate.

`parse_votes` is pure (text in, `ReflectionVotes` out) and names the file, line and value of every problem, like
`costa.calibration`; `load_votes` reads the file.

Example:
    >>> text = ("# MIN_AUC=0.75 MIN_EACH=8\\n" + ",".join(VOTES_COLUMNS) + "\\n"
    ...         "colour,aesthetics,object_removal,30,12,0.81,bench\\n"
    ...         "pixels,logical_consistency,object_removal,30,12,0.27,bench\\n")
    >>> v = parse_votes(text, "votes.csv")
    >>> v.vote("colour", "aesthetics", "object_removal").votes
    True
    >>> v.vote("pixels", "logical_consistency", "object_removal").reason
    'pixels/logical_consistency on object_removal: AUC 0.27 on 30 real results (needs 0.75)'
    >>> v.vote("colour", "aesthetics", "outpainting").votes
    False
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from costa.errors import TableError
from costa.reflect.protocol import ExpertJudgement

VOTES_FILE = Path(__file__).resolve().parents[2] / "tool_tables" / "reflection_votes.csv"
VOTES_COLUMNS = ("expert", "dimension", "kind", "n", "right", "auc", "source")
SOURCES = ("bench", "person", "bench+person", "fake")
_HEADER_RE = {
    "min_auc": re.compile(r"\bMIN_AUC\s*=\s*([0-9.]+)\b"),
    "min_each": re.compile(r"\bMIN_EACH\s*=\s*(\d+)\b"),
}


@dataclass(frozen=True)
class Vote:
    """Whether a dimension votes for a kind, and one plain sentence why (or why not)."""

    votes: bool
    reason: str


@dataclass(frozen=True)
class VoteRow:
    """One (expert, dimension, kind)'s evidence: `n` judged real results, `right` of them right, their `auc`."""

    expert: str
    dimension: str
    kind: str
    n: int
    right: int
    auc: float | None
    source: str


@dataclass(frozen=True)
class ReflectionVotes:
    """The parsed votes table: evidence per (expert, dimension, kind) and the bars a vote needs."""

    min_auc: float
    min_each: int
    rows: Mapping[tuple[str, str, str], VoteRow]

    def vote(self, expert: str, dimension: str, kind: str) -> Vote:
        """Votes only with ≥ `min_each` right and wrong real results for this exact kind and AUC ≥ `min_auc`
        (never borrowed from another kind: a colour score that ranks recolourings says nothing about removals)."""
        what = f"{expert}/{dimension} on {kind}"
        row = self.rows.get((expert, dimension, kind))
        if row is None or row.n == 0:
            return Vote(False, f"{what}: never measured on real photos")
        wrong = row.n - row.right
        if row.right < self.min_each or wrong < self.min_each or row.auc is None:
            return Vote(
                False, f"{what}: too few real results to measure ({row.right} right, {wrong} wrong; needs "
                f"{self.min_each} of each)",
            )  # fmt: skip
        if row.auc < self.min_auc:
            return Vote(False, f"{what}: AUC {row.auc:.2f} on {row.n} real results (needs {self.min_auc:.2f})")
        return Vote(True, f"{what}: AUC {row.auc:.2f} on {row.n} real results")

    def calibrate(self, judgements: Sequence[ExpertJudgement], kind: str) -> Calibrated:
        """S from the voting dimensions only: the mean of their scores for this `kind` (None when none votes), the
        plain mean of every judged dimension (`raw`, what the experts said), and each judged dimension's vote."""
        voted: list[float] = []
        every: list[float] = []
        lines: list[Vote] = []
        for j in judgements:
            for dim in j.judged:
                value = j.scores[dim]
                assert value is not None  # judged
                every.append(float(value))
                v = self.vote(j.name, dim, kind)
                lines.append(v)
                if v.votes:
                    voted.append(float(value))
        raw = sum(every) / len(every) if every else 0.0
        return Calibrated(sum(voted) / len(voted) if voted else None, raw, tuple(lines))


@dataclass(frozen=True)
class Calibrated:
    """A reflection's score after the votes: `score` the voting dimensions' mean (None: no dimension votes, so
    reflection can neither accept nor reject), `raw` the mean of every judged dimension, `votes` each one's vote."""

    score: float | None
    raw: float
    votes: tuple[Vote, ...]

    @property
    def silent(self) -> tuple[str, ...]:
        """Why each dimension that does not vote is silent (one sentence each)."""
        return tuple(v.reason for v in self.votes if not v.votes)


def parse_votes(text: str, where: str = "reflection_votes.csv") -> ReflectionVotes:
    """Parse the votes table's text; raise `TableError` naming `where`, the line and the value.

    The header comment (lines starting with '#', before the column line) must say `MIN_AUC=x` (0.5 ≤ x ≤ 1) and
    `MIN_EACH=N` (N ≥ 1).

    Raises:
        TableError: a missing bar, a wrong header, counts that are not whole numbers or where right > n, an AUC
            outside [0, 1], an unknown source, a duplicate row.
    """
    lines = text.splitlines()
    comments = " ".join(ln for ln in lines if ln.startswith("#"))
    found = {k: rx.search(comments) for k, rx in _HEADER_RE.items()}
    if found["min_auc"] is None or found["min_each"] is None:
        raise TableError(f"{where}: the header comment must say MIN_AUC=x and MIN_EACH=N")
    min_auc, min_each = float(found["min_auc"].group(1)), int(found["min_each"].group(1))
    if not 0.5 <= min_auc <= 1.0:
        raise TableError(f"{where}: MIN_AUC must be in [0.5, 1], got {min_auc}")
    if min_each < 1:
        raise TableError(f"{where}: MIN_EACH must be at least 1, got {min_each}")
    first = next((i for i, ln in enumerate(lines) if ln.strip() and not ln.startswith("#")), None)
    if first is None:
        raise TableError(f"{where}: no column line; expected {','.join(VOTES_COLUMNS)}")
    reader = csv.DictReader(io.StringIO("\n".join(lines[first:])))
    if tuple(reader.fieldnames or ()) != VOTES_COLUMNS:
        raise TableError(f"{where}: header must be {','.join(VOTES_COLUMNS)}, got {reader.fieldnames}")
    rows: dict[tuple[str, str, str], VoteRow] = {}
    for offset, raw in enumerate(reader, start=2):
        at = f"{where} line {first + offset}"
        row = _parse_row(raw, at)
        key = (row.expert, row.dimension, row.kind)
        if key in rows:
            raise TableError(f"{at}: duplicate row {key}")
        rows[key] = row
    return ReflectionVotes(min_auc, min_each, MappingProxyType(rows))


def _parse_row(raw: Mapping[str, str | None], at: str) -> VoteRow:
    values = {k: (raw.get(k) or "").strip() for k in VOTES_COLUMNS}
    for key in ("expert", "dimension", "kind"):
        if not re.fullmatch(r"[a-z0-9_]+", values[key]):
            raise TableError(f"{at}: {key} must be a snake_case id, got {values[key]!r}")
    try:
        n, right = int(values["n"]), int(values["right"])
    except ValueError as e:
        raise TableError(f"{at}: n and right must be whole numbers, got {values['n']!r}, {values['right']!r}") from e
    if n < 0 or not 0 <= right <= n:
        raise TableError(f"{at}: need 0 <= right <= n, got right={right}, n={n}")
    try:
        auc = float(values["auc"]) if values["auc"] else None
    except ValueError as e:
        raise TableError(f"{at}: auc must be a number or empty, got {values['auc']!r}") from e
    if auc is not None and not 0.0 <= auc <= 1.0:
        raise TableError(f"{at}: auc must be in [0, 1], got {auc}")
    if values["source"] not in SOURCES:
        raise TableError(f"{at}: source must be one of {', '.join(SOURCES)}, got {values['source']!r}")
    return VoteRow(values["expert"], values["dimension"], values["kind"], n, right, auc, values["source"])


def format_votes(min_auc: float, min_each: int, rows: Sequence[VoteRow], note: str = "") -> str:
    """The table's text for `rows` (sorted), with the bars in the header comment and an optional note line.

    >>> row = VoteRow("colour", "aesthetics", "outpainting", 9, 3, 0.5, "bench")
    >>> print(format_votes(0.75, 8, [row]).splitlines()[-1])
    colour,aesthetics,outpainting,9,3,0.5000,bench
    """
    out = [
        f"# MIN_AUC={min_auc:g} MIN_EACH={min_each}: a reflection expert's dimension votes for a subtask kind only "
        "with this AUC separating right from wrong real results, on at least MIN_EACH of each "
        "(costa/reflect/votes.py).",
        "# Written by `python -m costa bench real --write` from the real-photo suite's dev part; do not edit by hand.",
    ]
    if note:
        out.append(f"# {note}")
    out.append(",".join(VOTES_COLUMNS))
    for r in sorted(rows, key=lambda r: (r.kind, r.expert, r.dimension)):
        auc = "" if r.auc is None else f"{r.auc:.4f}"
        out.append(",".join((r.expert, r.dimension, r.kind, str(r.n), str(r.right), auc, r.source)))
    return "\n".join(out) + "\n"


def load_votes(path: Path | None = None) -> ReflectionVotes:
    """Read and parse the votes table (default `tool_tables/reflection_votes.csv`).

    Raises:
        TableError: the file is missing or malformed (the message names it).
    """
    p = Path(path) if path is not None else VOTES_FILE
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise TableError(f"{p}: cannot read the reflection votes table ({e.strerror or e})") from e
    return parse_votes(text, str(p))
