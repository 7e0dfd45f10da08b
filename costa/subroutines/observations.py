"""Observations that persist: every tool run and subtask trace in the store, learned rules and counters.

The tables come from the store's `_m4_observations` migration and are reached through the store's own connections
(`Store.connect`: one owner for every table, `foreign_keys=ON`). `ObservationLog` writes and reads them; estimates for
the search (`StoredEstimates`) are learned from the tool runs of this machine kind ("cpu" or "gpu") across
processes and blended with the table prior by count, exactly as the in-memory `Estimates` blends one process's runs.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> from costa.store import Store
    >>> log = ObservationLog(Store(Path(tempfile.mkdtemp())))
    >>> log.record_tool_run("global_adjust", "global_adjustment", 0.01, 1.0, True, machine="cpu")
    >>> log.aggregates("cpu")[("global_adjust", "global_adjustment")]
    (1, 0.01, 1.0)
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from costa.services import PRIOR_WEIGHT, Estimates
from costa.store import Store
from costa.subroutines.rules import Rule, RuleTable


def machine_kind() -> str:
    """ "gpu" when an NVIDIA device node exists, else "cpu" (no torch import)."""
    return "gpu" if Path("/dev/nvidia0").exists() else "cpu"


@dataclass(frozen=True)
class Trace:
    """One subtask's run: the tool path that served it, its tool-seconds and quality, why it failed if it did."""

    task: str
    kind: str
    path: tuple[str, ...]
    seconds: float
    quality: float
    success: bool
    reason: str
    features: Mapping[str, Any]
    mode: str = ""
    rule_id: str | None = None


@dataclass(frozen=True)
class Proposal:
    """A recorded induction proposal: what it asked, at which refinement, whether verification accepted it."""

    id: int
    inducer: str
    action: str
    rule: Rule
    refinement: int
    accepted: bool
    evidence: Mapping[str, Any]


_INSERT_RUN = (
    "INSERT INTO tool_runs (created, machine, tool, kind, seconds, quality, passed, features, params)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_TRACE = (
    "INSERT INTO subtask_traces (created, machine, task, kind, path, seconds, quality, success, reason, features, mode,"
    " rule_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class ObservationLog:
    """Reads and writes the observation tables of one store (one short connection per operation)."""

    def __init__(self, store: Store, buffered: bool = False) -> None:
        """`buffered`: hold tool runs and traces in memory until `flush` (one transaction per turn, not per run)."""
        self.store = store
        self.buffered = buffered
        self._runs: list[tuple[Any, ...]] = []
        self._traces: list[tuple[Any, ...]] = []

    def flush(self) -> None:
        """Write the buffered tool runs and traces in one transaction."""
        if not self._runs and not self._traces:
            return
        runs, traces = self._runs, self._traces
        self._runs, self._traces = [], []
        with self._db(write=True) as db:
            db.executemany(_INSERT_RUN, runs)
            db.executemany(_INSERT_TRACE, traces)

    def _db(self, write: bool = False) -> AbstractContextManager[Any]:
        """The store's connection; observations skip the flush to disk per commit (WAL: durable at checkpoints)."""
        return self.store.connect(write=write, durable=False)

    # ------------------------------------------------------------------------------------------ tool runs
    def record_tool_run(
        self,
        tool: str,
        kind: str,
        seconds: float,
        quality: float,
        passed: bool,
        features: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
        machine: str | None = None,
    ) -> None:
        row = (
            time.time(),
            machine or machine_kind(),
            tool,
            kind,
            float(seconds),
            float(quality),
            int(passed),
            json.dumps(dict(features or {}), default=str),
            json.dumps(dict(params or {}), default=str),
        )
        self._runs.append(row)
        if not self.buffered:
            self.flush()

    def aggregates(self, machine: str | None = None) -> dict[tuple[str, str], tuple[int, float, float]]:
        """(tool, kind) → (runs, total seconds, total quality) on `machine` (default: this machine's kind), each run
        a person judged counted at the verdict's quality (1 accepted, 0 discarded) instead of its check's."""
        self.flush()
        m = machine or machine_kind()
        with self._db() as db:
            rows = db.execute(
                "SELECT tool, kind, COUNT(*) n, SUM(seconds) s, SUM(quality) q FROM tool_runs WHERE machine = ?"
                " GROUP BY tool, kind",
                (m,),
            ).fetchall()
            fixes = db.execute(
                "SELECT tool, kind, SUM(CASE verdict WHEN 'accepted' THEN 1.0 ELSE 0.0 END - quality) d FROM verdicts"
                " WHERE machine = ? AND quality IS NOT NULL AND verdict IN ('accepted', 'discarded')"
                " GROUP BY tool, kind",
                (m,),
            ).fetchall()
        fix = {(r["tool"], r["kind"]): float(r["d"] or 0.0) for r in fixes}
        out = {}
        for r in rows:
            key, n = (r["tool"], r["kind"]), int(r["n"])
            out[key] = (n, float(r["s"]), min(max(float(r["q"]) + fix.get(key, 0.0), 0.0), float(n)))
        return out

    # ------------------------------------------------------------------------------------------- traces
    def record_trace(self, trace: Trace, machine: str | None = None) -> None:
        row = (
            time.time(),
            machine or machine_kind(),
            trace.task,
            trace.kind,
            json.dumps(list(trace.path)),
            float(trace.seconds),
            float(trace.quality),
            int(trace.success),
            trace.reason,
            json.dumps(dict(trace.features), default=str),
            trace.mode,
            trace.rule_id,
        )
        self._traces.append(row)
        if not self.buffered:
            self.flush()

    def traces(self, kind: str | None = None, last: int | None = None) -> list[Trace]:
        """Subtask traces, oldest first (only `kind`'s; only the `last` n when given); flushes the buffer first."""
        self.flush()
        sql = "SELECT * FROM subtask_traces" + (" WHERE kind = ?" if kind else "") + " ORDER BY id DESC"
        args: tuple[Any, ...] = (kind,) if kind else ()
        if last is not None:
            sql += " LIMIT ?"
            args = (*args, int(last))
        with self._db() as db:
            rows = db.execute(sql, args).fetchall()
        return [
            Trace(
                r["task"],
                r["kind"],
                tuple(json.loads(r["path"])),
                r["seconds"],
                r["quality"],
                bool(r["success"]),
                r["reason"],
                json.loads(r["features"]),
                r["mode"],
                r["rule_id"],
            )
            for r in reversed(rows)
        ]

    # ----------------------------------------------------------------------------------------- counters
    def counter(self, name: str) -> int:
        with self._db() as db:
            r = db.execute("SELECT value FROM counters WHERE name = ?", (name,)).fetchone()
        return int(r["value"]) if r else 0

    def set_counter(self, name: str, value: int) -> None:
        with self._db(write=True) as db:
            db.execute(
                "INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = ?",
                (name, int(value), int(value)),
            )

    def bump(self, name: str) -> int:
        """Add one to counter `name` and return the new value (atomic)."""
        with self._db(write=True) as db:
            db.execute(
                "INSERT INTO counters (name, value) VALUES (?, 1)"
                " ON CONFLICT (name) DO UPDATE SET value = counters.value + 1",
                (name,),
            )
            return int(db.execute("SELECT value FROM counters WHERE name = ?", (name,)).fetchone()["value"])

    # ------------------------------------------------------------------------------------ learned rules
    def table_version(self) -> int:
        with self._db() as db:
            r = db.execute("SELECT MAX(table_version) v FROM subroutine_rules").fetchone()
        return int(r["v"] or 0)

    def append_rules(self, changes: list[tuple[str, Rule]]) -> int:
        """Record ("add" | "modify" | "retire", rule) changes as one new table version; return that version."""
        with self._db(write=True) as db:
            r = db.execute("SELECT MAX(table_version) v FROM subroutine_rules").fetchone()
            version = int(r["v"] or 0) + 1
            for action, rule in changes:
                rule = Rule.from_dict({**rule.to_dict(), "version": version, "source": "learned"})
                db.execute(
                    "INSERT INTO subroutine_rules (table_version, rule_id, action, rule, created)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (version, rule.id, action, json.dumps(rule.to_dict()), time.time()),
                )
        return version

    def learned_rules(self, version: int | None = None) -> tuple[Rule, ...]:
        """Learned rules in force at table `version` (default: the latest)."""
        sql = "SELECT * FROM subroutine_rules" + (" WHERE table_version <= ?" if version is not None else "")
        with self._db() as db:
            rows = db.execute(sql + " ORDER BY id", (version,) if version is not None else ()).fetchall()
        current: dict[str, Rule] = {}
        for r in rows:
            if r["action"] == "retire":
                current.pop(r["rule_id"], None)
            else:
                current[r["rule_id"]] = Rule.from_dict(json.loads(r["rule"]))
        return tuple(current.values())

    def rule_table(self, shipped: tuple[Rule, ...], version: int | None = None) -> RuleTable:
        """Shipped rules (minus those retired by learning) plus learned rules, at table `version`."""
        learned = self.learned_rules(version)
        retired = self._retired_shipped(version)
        ids = {r.id for r in learned}
        rules = tuple(r for r in shipped if r.id not in ids and r.id not in retired) + learned
        return RuleTable(rules, self.table_version() if version is None else version)

    def _retired_shipped(self, version: int | None) -> set[str]:
        where = version is not None
        sql = "SELECT rule_id, action FROM subroutine_rules" + (" WHERE table_version <= ?" if where else "")
        with self._db() as db:
            rows = db.execute(sql + " ORDER BY id", (version,) if where else ()).fetchall()
        state: dict[str, str] = {}
        for r in rows:
            state[r["rule_id"]] = r["action"]
        return {rid for rid, action in state.items() if action == "retire"}

    # -------------------------------------------------------------------------------------- proposals
    def record_proposal(
        self, inducer: str, action: str, rule: Rule, refinement: int, accepted: bool, evidence: Mapping[str, Any]
    ) -> int:
        with self._db(write=True) as db:
            return db.insert(
                "INSERT INTO subroutine_proposals (created, inducer, action, rule, refinement, accepted, evidence)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    time.time(),
                    inducer,
                    action,
                    json.dumps(rule.to_dict()),
                    refinement,
                    int(accepted),
                    json.dumps(dict(evidence), default=str),
                ),
            )

    def proposals(self) -> list[Proposal]:
        with self._db() as db:
            rows = db.execute("SELECT * FROM subroutine_proposals ORDER BY id").fetchall()
        return [
            Proposal(
                r["id"],
                r["inducer"],
                r["action"],
                Rule.from_dict(json.loads(r["rule"])),
                r["refinement"],
                bool(r["accepted"]),
                json.loads(r["evidence"]),
            )
            for r in rows
        ]


@dataclass
class StoredEstimates(Estimates):
    """`Estimates` whose observations persist: loaded from this machine kind's tool runs, written on `observe`."""

    log: ObservationLog | None = None
    machine: str = field(default_factory=machine_kind)
    threshold: float = 0.8

    def __post_init__(self) -> None:
        if self.log is not None:
            self._obs.update(self.log.aggregates(self.machine))

    def observe(self, tool: str, kind: str, seconds: float, quality: float) -> None:
        super().observe(tool, kind, seconds, quality)
        if self.log is not None:  # the whole-plan search's runs (no context): written at once
            self.log.record_tool_run(tool, kind, seconds, quality, quality >= self.threshold, machine=self.machine)
            self.log.flush()

    def observe_run(
        self,
        tool: str,
        kind: str,
        seconds: float,
        quality: float,
        passed: bool,
        features: Mapping[str, Any],
        params: Mapping[str, Any],
    ) -> None:
        """Record one run with its context and parameters (the fast–slow executor's full record)."""
        super().observe(tool, kind, seconds, quality)
        if self.log is not None:
            self.log.record_tool_run(tool, kind, seconds, quality, passed, features, params, self.machine)

    def compare(self) -> list[tuple[str, str, float, float, float, float, int]]:
        """(tool, kind, table seconds, table quality, learned seconds, learned quality, runs) for observed pairs."""
        out = []
        for (tool, kind), n in sorted(self.observed().items()):
            if (tool, kind) not in self.tables.benchmark:
                continue
            row = self.tables.benchmark[(tool, kind)]
            s, q = self.get(tool, kind)
            out.append((tool, kind, row.seconds, row.quality, s, q, n))
        return out


def stored_estimates(services: Any, store: Store) -> StoredEstimates:
    """Estimates learned from this machine kind's runs in `store`, blended with the table by count (the process's
    `services.estimates` are left as they are)."""
    return StoredEstimates(services.tables, log=ObservationLog(store), threshold=services.settings.threshold)


__all__ = ["PRIOR_WEIGHT", "ObservationLog", "Proposal", "StoredEstimates", "Trace", "machine_kind"]
