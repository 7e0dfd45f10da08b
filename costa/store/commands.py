"""CLI commands for the store: `python -m costa store check | repair | gc` (COSTA_HOME, COSTA_DATABASE_URL).

Exit codes: 0 nothing wrong (or the repair lost nothing), 1 problems found (or something could not be recovered),
2 the store could not be opened at all (the message says why and what to run).
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from costa.config import Settings


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Add `store` and its commands to the CLI's subcommands."""
    s = sub.add_parser("store", help="check, repair or trim the store in COSTA_HOME")
    ss = s.add_subparsers(dest="store_command", required=True)
    c = ss.add_parser(
        "check",
        help="verify the database, the identity and every version's file; change nothing",
        description="The engine's full integrity check, the store identity in the database against the one beside "
        "the files, every version's file present with the bytes it was stored with (--deep: decodes every file "
        "and compares its pixels' SHA-256), journals, and files nothing accounts for. Exit 1 when anything is lost.",
    )
    c.add_argument("--deep", action="store_true", help="also decode every file and compare its pixels")
    c.add_argument("--json", action="store_true", help="print the findings as JSON")
    r = ss.add_parser(
        "repair",
        help="rebuild the index of versions from the files (stop the app first)",
        description="A damaged or missing database is moved aside (kept) and rebuilt: every readable row is copied, "
        "every version the session folders' journals record is indexed again when its file is intact; versions "
        "whose files are gone are dropped; unknown files are quarantined. Says what could not be recovered.",
    )
    r.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    g = ss.add_parser(
        "gc",
        help="delete sessions idle for longer than the retention period, and empty ones",
        description="Deletes sessions idle for more than --days (default COSTA_RETENTION_DAYS; nothing expires "
        "when neither is set) with every row and file the store wrote for them, and sessions left empty for a day; "
        "files nothing accounts for are quarantined, never deleted.",
    )
    g.add_argument("--days", type=float, default=None, help="retention in days (default COSTA_RETENTION_DAYS)")
    g.add_argument("--dry-run", action="store_true", help="say what would be deleted, delete nothing")


def cmd_store(args: argparse.Namespace, out: TextIO) -> int:
    from costa.config import Settings

    settings = Settings.from_env()
    if args.store_command == "repair":
        return _repair(settings, args, out)
    from costa.errors import StorageError
    from costa.store import Store

    try:
        store: Store | None = Store.from_settings(settings)
    except StorageError as e:
        if args.store_command != "check":
            raise
        store, error = None, e
    if args.store_command == "check":
        from dataclasses import asdict

        from costa.store.backends import database_for
        from costa.store.check import check, check_unopened

        if store is None:
            report = check_unopened(settings.home, database_for(settings), error)
        else:
            report = check(store, deep=args.deep)
        if args.json:
            print(json.dumps({**asdict(report), "ok": report.ok}, indent=2), file=out)
        else:
            for line in report.lines():
                print(line, file=out)
        return 0 if report.ok else 1
    from costa.store.retention import gc

    assert store is not None
    days = args.days if args.days is not None else settings.retention_days
    done = gc(store, days, dry_run=args.dry_run)
    if days is None:
        print("no retention set (COSTA_RETENTION_DAYS or --days): idle sessions are kept", file=out)
    print(("dry run, nothing deleted: " if args.dry_run else "") + done.line(), file=out)
    return 0


def _repair(settings: Settings, args: argparse.Namespace, out: TextIO) -> int:
    import sys

    from costa.store.backends import database_for
    from costa.store.repair import repair

    if not args.yes and sys.stdin.isatty():
        answer = input(f"repair the store in {settings.home}? stop the app first [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing was changed", file=out)
            return 1
    report = repair(settings.home, database_for(settings))
    for line in report.lines():
        print(line, file=out)
    return 1 if report.lost else 0
