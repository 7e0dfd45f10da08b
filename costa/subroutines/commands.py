"""CLI commands for subroutines: `mine`, `rules list|diff|reset`, and the doctor's table-vs-learned estimates."""

from __future__ import annotations

import argparse
import json
from typing import TextIO


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Add `mine` and `rules` to the CLI's subcommands."""
    m = sub.add_parser(
        "mine",
        help="induce subroutines from the stored traces and verify them now; print each proposal's evidence",
        description="Runs the statistical inducer (and the LLM inducer when an endpoint is configured) on the traces "
        "in COSTA_HOME's store, verifies each proposal on fresh synthetic samples (25 image / 20 text subtasks, "
        "accepted iff B = ΔC% − ΔQ% < 0, up to 2 refinements), records everything and applies accepted rules.",
    )
    m.add_argument("--alpha", type=float, default=1.0, help="α the verification runs at, in [0, 2]")
    m.add_argument("--seed", type=int, default=0, help="seed of the fresh verification samples")
    r = sub.add_parser("rules", help="list, diff or reset the subroutine rule table (shipped + learned)")
    rs = r.add_subparsers(dest="rules_command", required=True)
    rl = rs.add_parser("list", help="the rules in force (at --version, default the latest)")
    rl.add_argument("--version", type=int, default=None)
    rl.add_argument("--json", action="store_true")
    rd = rs.add_parser("diff", help="what changed between two table versions")
    rd.add_argument("old", type=int)
    rd.add_argument("new", type=int)
    rs.add_parser("reset", help="retire every learned rule (a new table version; history is kept)")


def _runtime():  # -> FastSlowRuntime
    from costa.services import Services
    from costa.subroutines.runtime import FastSlowRuntime

    return FastSlowRuntime.from_services(Services(), induce=False)


def cmd_mine(args: argparse.Namespace, out: TextIO) -> int:
    from costa.search import check_alpha
    from costa.subroutines.verification import induce_and_verify

    check_alpha(args.alpha)
    rt = _runtime()
    assert rt.log is not None
    before = len(rt.log.proposals())
    traces = rt.log.traces()
    print(f"{len(traces)} stored subtask traces, table version {rt.log.table_version()}", file=out)
    done = induce_and_verify(rt.log.counter("tasks"), rt, alpha=args.alpha, seed=args.seed)
    for p in rt.log.proposals()[before:]:
        mark = "ACCEPTED" if p.accepted else "rejected"
        print(f"{mark} ({p.inducer}, {p.action}, refinement {p.refinement}): {p.rule.describe()}", file=out)
        print(f"  evidence: {json.dumps(dict(p.evidence), ensure_ascii=False)}", file=out)
    print(f"{done.proposals} proposal(s), {len(done.accepted)} accepted; rule table version {done.version}", file=out)
    return 0


def cmd_rules(args: argparse.Namespace, out: TextIO) -> int:
    from costa.errors import InputError
    from costa.subroutines.rules import diff_tables

    rt = _runtime()
    assert rt.log is not None
    latest = rt.log.table_version()
    if args.rules_command == "list":
        if args.version is not None and not 0 <= args.version <= latest:
            raise InputError(f"--version must be in [0, {latest}], got {args.version}")
        table = rt.log.rule_table(rt.shipped, args.version)
        if args.json:
            print(json.dumps([r.to_dict() for r in table.rules], indent=2), file=out)
            return 0
        print(f"rule table version {table.version} (latest {latest}): {len(table.rules)} rules", file=out)
        for r in table.rules:
            print(
                f"  {r.source:7} v{r.version:<3} {r.describe()}  [{r.seconds:.3f} s, quality {r.quality:.2f}, "
                f"support {r.support}]",
                file=out,
            )
        return 0
    if args.rules_command == "diff":
        for v in (args.old, args.new):
            if not 0 <= v <= latest:
                raise InputError(f"versions must be in [0, {latest}], got {v}")
        changes = diff_tables(rt.log.rule_table(rt.shipped, args.old), rt.log.rule_table(rt.shipped, args.new))
        print(f"rule table v{args.old} → v{args.new}: {len(changes)} change(s)", file=out)
        for what, old, new in changes:
            if what == "added" and new is not None:
                print(f"  + {new.describe()}  evidence {json.dumps(dict(new.evidence), ensure_ascii=False)}", file=out)
            elif what == "retired" and old is not None:
                print(f"  - {old.describe()}", file=out)
            elif old is not None and new is not None:
                print(f"  ~ {old.describe()}\n    → {new.describe()}", file=out)
        return 0
    learned = rt.log.learned_rules()
    if learned:
        version = rt.log.append_rules([("retire", r) for r in learned])
        print(
            f"retired {len(learned)} learned rule(s); rule table version {version} has the shipped rules only", file=out
        )
    else:
        print("no learned rules to reset", file=out)
    return 0


def print_estimates(out: TextIO) -> None:
    """The doctor's section: table estimates vs those learned from this machine kind's stored tool runs."""
    from costa.config import Settings
    from costa.errors import StorageError
    from costa.services import Services
    from costa.store import Store
    from costa.subroutines.observations import machine_kind, stored_estimates

    services = Services(Settings.from_env())
    try:
        est = stored_estimates(services, Store.from_settings(services.settings))  # the database replicas share
        rows = est.compare()
    except StorageError as e:  # said once on the store line above; the rest of the doctor's report stands
        print(f"estimates on this {machine_kind()} machine: the learned ones cannot be read ({e})", file=out)
        return
    print(
        f"estimates on this {machine_kind()} machine: table vs learned from {len(rows)} observed tool × subtask",
        file=out,
    )
    for tool, kind, ts, tq, ls, lq, n in rows:
        print(
            f"  {tool:24} {kind:22} table {ts:8.4f} s q {tq:.2f}   learned {ls:8.4f} s q {lq:.2f}  ({n} runs)", file=out
        )


def describe_event(ev: object) -> str:
    """One line for a fast–slow event (rule hit, fallback, induction) in the CLI's run log."""
    from costa.events import Fallback, InductionDone, RuleHit

    if isinstance(ev, RuleHit):
        when = " and ".join(ev.conditions) or "always"
        return f"  fast  {ev.subtask_id} rule {ev.rule_id} (table v{ev.version}, when {when}): {' → '.join(ev.tools)}"
    if isinstance(ev, Fallback):
        return f"  slow  {ev.subtask_id} local A*: {ev.reason}"
    if isinstance(ev, InductionDone):
        return (
            f"induction after {ev.tasks} tasks: {ev.proposals} proposal(s), accepted {list(ev.accepted) or 'none'}; "
            f"rule table v{ev.version}"
        )
    return str(ev)
