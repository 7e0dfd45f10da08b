"""The subroutine rule table: versioned, inspectable rules mapping a context to a tool sequence.

A rule says: for a subtask of `kind` whose context features satisfy every one of its `conditions`, run `tools` in
order (each step checked). It carries the mean seconds and quality seen when it ran, its `support` (traces behind
it), the table `version` it entered at and the `evidence` that accepted it. Shipped rules live in
`tool_tables/subroutines.yaml` (version 0); learned rules are appended to the store by the verifier, each accepted
change a new table version, so any two versions can be diffed and learned rules reset without losing history.

Choosing among applicable rules uses the search's own score, `costa.search.score`: the rule minimising
C^α·(2 − Q)^(2 − α) runs first (the published code minimised C^α·Q^(2−α), which prefers *worse* quality).

Example:
    >>> r = Rule("r1", "text_removal", ("rapidocr_detect", "text_remove_telea"), (Condition("texture", "<", 6.0),),
    ...          seconds=0.4, quality=0.95)
    >>> from costa.subroutines.features import ContextFeatures
    >>> r.applies(ContextFeatures("text_removal", 100, texture=2.0)), r.applies(ContextFeatures("text_removal", 100,
    ...     texture=9.0))
    (True, False)
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import yaml

from costa.errors import TableError
from costa.graph import subtask_chains
from costa.search import score
from costa.subroutines.features import FEATURE_NAMES, ContextFeatures
from costa.tables import Tables

RULES_FILE = "subroutines.yaml"
Op = Literal["<", "<=", ">", ">="]
_OPS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


@dataclass(frozen=True)
class Condition:
    """`feature op value`, e.g. texture < 6 (units as in `costa.subroutines.features`)."""

    feature: str
    op: str
    value: float

    def __post_init__(self) -> None:
        if self.feature not in FEATURE_NAMES:
            raise TableError(f"condition on unknown feature {self.feature!r}; known: {FEATURE_NAMES}")
        if self.op not in _OPS:
            raise TableError(f"condition operator must be one of {sorted(_OPS)}, got {self.op!r}")

    def holds(self, features: ContextFeatures) -> bool:
        return _OPS[self.op](features.value(self.feature), self.value)

    def describe(self) -> str:
        return f"{self.feature} {self.op} {self.value:g}"


@dataclass(frozen=True)
class Rule:
    """One subroutine: run `tools` for a `kind` subtask when all `conditions` hold.

    seconds: mean tool-seconds of the whole sequence when it ran; quality: mean product of its checked step
    qualities (0–1); support: traces it was induced from or served; version: table version it entered at;
    source: "shipped" or "learned"; evidence: how it was accepted (verification figures, inducer notes).
    """

    id: str
    kind: str
    tools: tuple[str, ...]
    conditions: tuple[Condition, ...] = ()
    seconds: float = 0.0
    quality: float = 1.0
    support: int = 0
    version: int = 0
    source: str = "shipped"
    evidence: Mapping[str, Any] = field(default_factory=dict)
    #: A contrastive rule's first choice: the tool path that fails its check where this rule applies (learned from
    #: traces where that path failed and `tools` passed). A rule running that path is not chosen where this one applies.
    replaces: tuple[str, ...] = ()

    def applies(self, features: ContextFeatures) -> bool:
        return features.kind == self.kind and all(c.holds(features) for c in self.conditions)

    def score(self, alpha: float) -> float:
        return score(max(self.seconds, 1e-6), min(max(self.quality, 0.0), 1.0), alpha)

    def describe(self) -> str:
        when = " and ".join(c.describe() for c in self.conditions) or "always"
        instead = f" (instead of {' → '.join(self.replaces)})" if self.replaces else ""
        return f"{self.id} [{self.kind}] {' → '.join(self.tools)} when {when}{instead}"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["tools"] = list(self.tools)
        d["replaces"] = list(self.replaces)
        d["conditions"] = [asdict(c) for c in self.conditions]
        d["evidence"] = dict(self.evidence)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Rule:
        return cls(
            id=str(d["id"]),
            kind=str(d["kind"]),
            tools=tuple(d["tools"]),
            conditions=tuple(Condition(c["feature"], c["op"], float(c["value"])) for c in d.get("conditions", ())),
            seconds=float(d.get("seconds", 0.0)),
            quality=float(d.get("quality", 1.0)),
            support=int(d.get("support", 0)),
            version=int(d.get("version", 0)),
            source=str(d.get("source", "shipped")),
            evidence=dict(d.get("evidence", {})),
            replaces=tuple(d.get("replaces") or ()),
        )

    def key(self) -> str:
        """Stable JSON of what the rule does (kind, tools, conditions): equal keys mean the same rule."""
        what: list[Any] = [self.kind, list(self.tools), [asdict(c) for c in self.conditions]]
        return json.dumps([*what, list(self.replaces)] if self.replaces else what)


@dataclass(frozen=True)
class RuleTable:
    """The rules in force at one `version` (shipped + learned)."""

    rules: tuple[Rule, ...]
    version: int = 0

    def applicable(self, features: ContextFeatures) -> tuple[Rule, ...]:
        return tuple(r for r in self.rules if r.applies(features))

    def choose(self, features: ContextFeatures, alpha: float, exclude: Iterable[str] = ()) -> Rule | None:
        """The applicable rule with the lowest C^α·(2 − Q)^(2 − α); ties go to the lower C·(2 − Q), then the more
        specific, then older one.

        The second key matters at the ends of α: at α = 0 the score is quality alone and learned rules often share a
        quality of 1.0 (every check passed), so without it the tie went to the more specific rule whatever it cost
        (a 2.2-s chain beside a 1.1-s one of the same quality); at α = 2 it is cost alone and the tie goes to the
        better quality. A rule whose path an applicable contrastive rule `replaces` is left out: the traces say it
        fails here.
        """
        skip = set(exclude)
        found = [r for r in self.applicable(features) if r.id not in skip]
        failing = {(r.kind, r.replaces) for r in found if r.replaces}
        found = [r for r in found if (r.kind, r.tools) not in failing] or found  # (two that replace each other)
        if not found:
            return None
        return min(found, key=lambda r: (r.score(alpha), r.score(1.0), -len(r.conditions), r.version, r.id))

    def fingerprint(self) -> str:
        """Identity of the rules in force (ids and what they do), for caching results under this table."""
        return json.dumps(sorted((r.id, r.key()) for r in self.rules))

    def by_id(self) -> dict[str, Rule]:
        return {r.id: r for r in self.rules}

    def with_rule(self, rule: Rule) -> RuleTable:
        """This table with `rule` added (or replacing the rule of the same id)."""
        return RuleTable((*(r for r in self.rules if r.id != rule.id), rule), self.version)

    def without(self, rule_id: str) -> RuleTable:
        return RuleTable(tuple(r for r in self.rules if r.id != rule_id), self.version)


def validate_rules(rules: Sequence[Rule], tables: Tables, where: str) -> None:
    """Every rule names known tools that form a real chain for its kind (from the image and a user box).

    Raises:
        TableError: naming the file, the rule and what is wrong.
    """
    seen: set[str] = set()
    for r in rules:
        at = f"{where}: rule {r.id!r}"
        if r.id in seen:
            raise TableError(f"{at}: duplicate id")
        seen.add(r.id)
        if r.kind not in tables.subtasks:
            raise TableError(f"{at}: unknown subtask kind {r.kind!r}")
        unknown = [t for t in r.tools if t not in tables.tools]
        if unknown:
            raise TableError(f"{at}: unknown tools {unknown}")
        chains = set(subtask_chains(tables, r.kind, frozenset({"boxes"}), lambda t: True))
        chains |= set(subtask_chains(tables, r.kind, frozenset(), lambda t: True))
        if r.tools not in chains:
            raise TableError(f"{at}: {' → '.join(r.tools)} is not a tool chain that completes {r.kind}")


def load_shipped_rules(tables: Tables, directory: Path | str | None = None) -> tuple[Rule, ...]:
    """Read and validate tool_tables/subroutines.yaml (version 0, source "shipped")."""
    folder = Path(directory) if directory is not None else Path(__file__).resolve().parents[2] / "tool_tables"
    path = folder / RULES_FILE
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise TableError(f"{path}: cannot read: {e}") from e
    if not isinstance(doc, dict) or not isinstance(doc.get("rules"), list):
        raise TableError(f"{path}: expected a mapping with a 'rules' list")
    rules = []
    for i, row in enumerate(doc["rules"]):
        try:
            rule = Rule.from_dict({**row, "version": 0, "source": "shipped"})
        except (KeyError, TypeError, ValueError) as e:
            raise TableError(f"{path} rule {i + 1}: {e!r}") from e
        if not row.get("seconds"):  # the table's estimate of the chain when the file gives none
            secs = sum(
                tables.benchmark[(t, rule.kind)].seconds for t in rule.tools if (t, rule.kind) in tables.benchmark
            )
            rule = replace(rule, seconds=secs)
        rules.append(rule)
    validate_rules(rules, tables, str(path))
    return tuple(rules)


def diff_tables(old: RuleTable, new: RuleTable) -> list[tuple[str, Rule | None, Rule | None]]:
    """What changed between two tables: ("added", None, rule), ("retired", rule, None), ("modified", old, new)."""
    a, b = old.by_id(), new.by_id()
    out: list[tuple[str, Rule | None, Rule | None]] = []
    for rid in sorted(set(a) | set(b)):
        if rid not in a:
            out.append(("added", None, b[rid]))
        elif rid not in b:
            out.append(("retired", a[rid], None))
        elif a[rid].key() != b[rid].key():
            out.append(("modified", a[rid], b[rid]))
    return out
