"""The reflection protocol's settings (from tool_tables/reflection.yaml) and its records: judgements and decisions.

Pure: parse a table, average scores, decide. No images, no I/O beyond reading the table.

Example:
    >>> p = load_protocol()
    >>> p.tau_sr, p.tau_it
    (7.0, 3)
    >>> j = ExpertJudgement("a", "offline", {"semantic_alignment": 9.0, "aesthetics": None})
    >>> j.score, j.judged
    (9.0, ('semantic_alignment',))
    >>> p.decide(aggregate([j, ExpertJudgement("b", "offline", {"aesthetics": 4.0})]), attempt=1)
    ('retry', 6.5)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from costa.errors import TableError

TABLE = Path(__file__).resolve().parents[2] / "tool_tables" / "reflection.yaml"
DIMENSIONS: tuple[str, ...] = ("semantic_alignment", "perceptual_quality", "aesthetics", "logical_consistency")
ACTIONS: tuple[str, ...] = ("other_path", "next_params", "other_grounder", "restore_protected", "ask_user")
Decision = Literal["accept", "retry", "best_of"]
ExpertKind = Literal["offline", "vlm"]


@dataclass(frozen=True)
class Feedback:
    """One piece of negative feedback and the retry action it asks for (one of `ACTIONS`, or "" for no preference)."""

    text: str
    action: str = ""


@dataclass(frozen=True)
class ExpertJudgement:
    """One expert's view of one attempt: per-dimension scores in [0, 10] (None = not judged), and its feedback.

    `score` is the mean of the judged dimensions; an expert that judged nothing has score None and is left out of
    the aggregate.
    """

    name: str
    kind: ExpertKind
    scores: Mapping[str, float | None]
    positive: tuple[str, ...] = ()
    negative: tuple[Feedback, ...] = ()

    def __post_init__(self) -> None:
        for dim, value in self.scores.items():
            if dim not in DIMENSIONS:
                raise ValueError(f"expert {self.name!r}: unknown dimension {dim!r}")
            if value is not None and not 0.0 <= value <= 10.0:
                raise ValueError(f"expert {self.name!r}: {dim} must be in [0, 10], got {value}")
        # Every dimension is present; the ones this expert did not judge are None (never a filled-in constant).
        object.__setattr__(self, "scores", {d: self.scores.get(d) for d in DIMENSIONS})

    @property
    def judged(self) -> tuple[str, ...]:
        return tuple(d for d in DIMENSIONS if self.scores.get(d) is not None)

    @property
    def score(self) -> float | None:
        values = [float(v) for v in self.scores.values() if v is not None]
        return sum(values) / len(values) if values else None

    def to_event(self) -> dict[str, Any]:
        """The event form: name, kind, all four dimensions (null where not judged), score, positive, negative."""
        return {
            "name": self.name,
            "kind": self.kind,
            "scores": {d: self.scores.get(d) for d in DIMENSIONS},
            "score": self.score,
            "positive": list(self.positive),
            "negative": [f.text for f in self.negative],
        }


def aggregate(judgements: Sequence[ExpertJudgement]) -> float:
    """S: the arithmetic mean of the scores of the experts that judged something (0.0 when none did)."""
    scores = [j.score for j in judgements if j.score is not None]
    return sum(scores) / len(scores) if scores else 0.0


@dataclass(frozen=True)
class OfflineExpertSpec:
    name: str
    judges: tuple[str, ...]
    about: str = ""
    options: Mapping[str, float] = field(default_factory=dict)
    kinds: Mapping[str, frozenset[str]] = field(default_factory=dict)  # named lists of subtask kinds


@dataclass(frozen=True)
class VlmRole:
    name: str
    rubric: str


@dataclass(frozen=True)
class Protocol:
    """The protocol's numbers and rubrics (see tool_tables/reflection.yaml for what each means)."""

    tau_sr: float = 7.0
    tau_it: int = 3
    actions: tuple[str, ...] = ACTIONS
    expected_cost_share: float = 0.4
    vlm_seconds: float = 3.0
    offline: tuple[OfflineExpertSpec, ...] = ()
    vlm_roles: tuple[VlmRole, ...] = ()
    aggregator_rubric: str = ""

    def decide(self, score: float, attempt: int) -> tuple[Decision, float]:
        """accept when S ≥ τ_sr; retry while attempts (1-based) remain; else best_of."""
        if score >= self.tau_sr:
            return "accept", score
        return ("retry" if attempt < self.tau_it else "best_of"), score

    def expert(self, name: str) -> OfflineExpertSpec:
        for e in self.offline:
            if e.name == name:
                return e
        raise KeyError(f"reflection.yaml has no offline expert {name!r}")

    def kinds(self, expert: str, key: str) -> frozenset[str]:
        """A named list of subtask kinds from an expert's row (empty when absent)."""
        try:
            return self.expert(expert).kinds.get(key, frozenset())
        except KeyError:
            return frozenset()

    def option(self, expert: str, key: str, default: float) -> float:
        try:
            return float(self.expert(expert).options.get(key, default))
        except KeyError:
            return default


def _need(d: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    if key not in d:
        raise TableError(f"reflection.yaml: {where} lacks {key!r}")
    value = d[key]
    if kind is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise TableError(f"reflection.yaml: {where} {key} must be a {kind.__name__}, got {value!r}")
    return value


def parse_protocol(data: Any) -> Protocol:
    """Validate the parsed YAML of reflection.yaml into a `Protocol`.

    Raises:
        TableError: naming the entry and the bad value.
    """
    if not isinstance(data, dict):
        raise TableError("reflection.yaml: expected a mapping at the top")
    tau_sr = _need(data, "tau_sr", float, "the table")
    tau_it = _need(data, "tau_it", int, "the table")
    if not 0.0 <= tau_sr <= 10.0:
        raise TableError(f"reflection.yaml: tau_sr must be in [0, 10], got {tau_sr}")
    if tau_it < 1:
        raise TableError(f"reflection.yaml: tau_it must be at least 1, got {tau_it}")
    dims = tuple(data.get("dimensions", DIMENSIONS))
    if dims != DIMENSIONS:
        raise TableError(f"reflection.yaml: dimensions must be {list(DIMENSIONS)}, got {list(dims)}")
    actions = tuple(data.get("actions", ACTIONS))
    if bad := [a for a in actions if a not in ACTIONS]:
        raise TableError(f"reflection.yaml: unknown actions {bad}; known: {list(ACTIONS)}")
    offline = []
    for i, row in enumerate(data.get("offline") or [], start=1):
        where = f"offline expert {i}"
        if not isinstance(row, dict):
            raise TableError(f"reflection.yaml: {where} must be a mapping, got {row!r}")
        name = _need(row, "name", str, where)
        judges = tuple(_need(row, "judges", list, where))
        if bad := [d for d in judges if d not in DIMENSIONS]:
            raise TableError(f"reflection.yaml: {where} ({name}) judges unknown dimensions {bad}")
        rest = {k: v for k, v in row.items() if k not in ("name", "judges", "about")}
        try:
            options = {k: float(v) for k, v in rest.items() if not isinstance(v, list)}
        except (TypeError, ValueError) as e:
            raise TableError(f"reflection.yaml: {where} ({name}) has a non-numeric option: {e}") from e
        kinds = {k: frozenset(str(x) for x in v) for k, v in rest.items() if isinstance(v, list)}
        offline.append(OfflineExpertSpec(name, judges, str(row.get("about", "")), options, kinds))
    roles = []
    for i, row in enumerate(data.get("vlm_roles") or [], start=1):
        where = f"vlm role {i}"
        if not isinstance(row, dict):
            raise TableError(f"reflection.yaml: {where} must be a mapping, got {row!r}")
        roles.append(VlmRole(_need(row, "name", str, where), _need(row, "rubric", str, where)))
    return Protocol(
        tau_sr=tau_sr,
        tau_it=tau_it,
        actions=actions,
        expected_cost_share=float(data.get("expected_cost_share", 0.4)),
        vlm_seconds=float(data.get("vlm_seconds", 3.0)),
        offline=tuple(offline),
        vlm_roles=tuple(roles),
        aggregator_rubric=str(data.get("aggregator_rubric", "")),
    )


def load_protocol(path: Path | None = None) -> Protocol:
    """Read and validate tool_tables/reflection.yaml (or `path`).

    Raises:
        TableError: the file cannot be read or is invalid.
    """
    import yaml

    path = path or TABLE
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise TableError(f"reflection.yaml: cannot read {path}: {e}") from e
    return parse_protocol(data)
