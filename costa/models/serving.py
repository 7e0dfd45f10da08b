"""`python -m costa serve` (start the Serve deployments of tool_tables/deployments.csv) and the lines `costa doctor`
prints about the runner and the store."""

from __future__ import annotations

import argparse
import time
from typing import Any, TextIO
from urllib.parse import urlsplit, urlunsplit

from costa.errors import InputError

SERVE_HELP = "start the Ray Serve deployments of tool_tables/deployments.csv on a local Ray"
SERVE_DESCRIPTION = (
    "Start (or connect to) a Ray on this machine — 127.0.0.1, no dashboard, no HTTP proxy — and start one Ray Serve "
    "deployment per tool family that tool_tables/deployments.csv serves (COSTA_DEPLOYMENTS_TABLE for another "
    "table): its replicas, GPU fraction and CPUs, each replica loading its models once. Families the table keeps "
    "in process are not started. Prints what it started. When this command started Ray itself, Ray lives in this "
    "process: it keeps serving until Ctrl-C. Then run costa or the app with COSTA_RUNNER=ray to send those tools' "
    "calls there. Needs the ray extra: pip install -r requirements-ray.txt."
)


def add_parsers(sub: Any) -> None:
    s = sub.add_parser("serve", help=SERVE_HELP, description=SERVE_DESCRIPTION)
    s.add_argument(
        "--address",
        help="a Ray cluster's client address (ray://HOST:PORT) instead of this machine's Ray "
        "(default: COSTA_RUNNER when it is one)",
    )
    s.add_argument(
        "--cpu-only",
        action="store_true",
        help="ask for no GPU: the served families run on CPUs (a machine without GPUs, a trial run)",
    )
    s.add_argument("--num-cpus", type=int, default=None, help="CPUs of a Ray this command starts (default: all)")
    s.add_argument(
        "--no-wait",
        action="store_true",
        help="return after starting the deployments even when Ray lives in this process (they stop with it)",
    )


def cmd_serve(args: argparse.Namespace, out: TextIO) -> int:
    import importlib.util

    from costa.config import Settings
    from costa.models.deployments import check_families, load_deployments
    from costa.tables import load_tables

    if importlib.util.find_spec("ray") is None:
        raise InputError("`costa serve` needs Ray: pip install -r requirements-ray.txt")
    from costa.models.ray_runner import connect
    from costa.models.replica import served_rows, start_deployments

    settings = Settings.from_env()
    tables = load_tables()
    rows = load_deployments(settings.deployments_table)
    check_families(rows, tables.tools, str(settings.deployments_table or "tool_tables/deployments.csv"))
    address = args.address or (settings.runner if settings.runner.startswith("ray://") else None)
    if address is not None and not address.startswith("ray://"):
        raise InputError(f"--address must be ray://HOST:PORT, got {address!r}")
    here = connect(address, start=True, num_cpus=args.num_cpus)
    where = "started here on 127.0.0.1 (no dashboard)" if here else f"connected to {address or 'the local Ray'}"
    print(f"ray: {where}", file=out)
    t0 = time.perf_counter()
    started = start_deployments(rows, tables.tools, cpu_only=args.cpu_only)
    for s in started:
        print(f"  started {s.line()}", file=out)
    waiting = sorted(r.family for r in rows.values() if r.served and r not in served_rows(rows, tables.tools))
    if waiting:
        print(f"  not started (no ready tool yet): {', '.join(waiting)}", file=out)
    local = sorted(r.family for r in rows.values() if not r.served)
    print(f"  in process, wherever costa runs: {', '.join(local)}", file=out)
    print(f"{len(started)} deployment(s) ready in {time.perf_counter() - t0:.1f} s", file=out)
    if here and not args.no_wait:
        print("Ray lives in this process: serving until Ctrl-C (set COSTA_RUNNER=ray for costa and app.py)", file=out)
        out.flush()
        import ray
        from ray import serve

        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            serve.shutdown()
            ray.shutdown()
            print("stopped", file=out)
    return 0


def database_line(url: str | None) -> str:
    """The store backend COSTA_DATABASE_URL names, with any password hidden.

    >>> database_line(None)
    'SQLite in COSTA_HOME (costa.db)'
    >>> database_line("postgresql://costa:secret@db.example:5432/costa")
    'postgresql://costa:***@db.example:5432/costa'
    """
    if not url:
        return "SQLite in COSTA_HOME (costa.db)"
    parts = urlsplit(url)
    if parts.password:
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
        return urlunsplit(parts._replace(netloc=netloc))
    return url


def store_line(settings: Any) -> str:
    """The store in use and whether it answers, in one line. Read-only: nothing is created, migrated or repaired
    (an empty database is said to be empty; costa makes its tables when the app or a turn first opens it)."""
    from costa.errors import CostaError
    from costa.store.backends import database_for

    head = f"store: {database_line(settings.database_url)} (COSTA_DATABASE_URL)"
    try:
        db = database_for(settings)
        try:
            if not db.exists():
                return f"{head}: reachable, empty (its tables are made at the first start)"
            problems = db.integrity(quick=True)
            if problems:
                return f"{head}: NOT usable: {problems[0][:300]}"
            with db.connect() as c:
                sessions = int(c.one("SELECT COUNT(*) AS n FROM sessions")["n"])
            return f"{head}: reachable, schema version {db.schema_version()}, {sessions} session(s)"
        finally:
            close = getattr(db, "close", None)
            if close is not None:
                close()
    except CostaError as e:
        return f"{head}: NOT reachable: {e}"


def runner_line(services: Any) -> str:
    """Which runner runs tool calls and whether it is reachable, in one line (Ray is contacted only when in use)."""
    setting = services.settings.runner
    runner = services.runner
    reachable = getattr(runner, "reachable", None)
    if reachable is None:
        return f"runner: {setting} (COSTA_RUNNER): tool calls run in this process"
    ok, said = reachable()
    return f"runner: {setting} (COSTA_RUNNER): {'reachable' if ok else 'NOT reachable'}: {said}"
