"""One command line for every benchmark: `python -m costa bench NAME [options]` (or `python -m bench NAME …`).

Each runner is a module `bench.<name>` with `HELP` (one line), `add_arguments(parser)` and `run(args) -> int`
(the exit code); it is imported only when chosen, so listing the benchmarks stays fast. To add one, write the module
and add its name to `RUNNERS`.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from costa.errors import CostaError

#: Runner modules under `bench/`, in the order `--help` lists them.
RUNNERS: tuple[str, ...] = (
    "search",
    "edit",
    "tools",
    "tasks",
    "planner",
    "conversation",
    "app",
    "faults",
    "store_scale",
    "scale",
    "fasta",
    "reflection",
    "grounding",
    "checks",
    "neural",
    "real",
    "real_checks",
    "requests",
    "campaign",
    "masks",
    "memo",
)

#: The shared benchmark data beside the repository (<workspace>/shared/benchmarks); optional.
DEFAULT_BENCHMARKS_DIR = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"


def benchmarks_dir() -> Path | None:
    """Return the shared benchmark folder: `COSTA_BENCHMARKS_DIR`, else ../shared/benchmarks when it exists."""
    env = os.environ.get("COSTA_BENCHMARKS_DIR")
    if env:
        return Path(env)
    return DEFAULT_BENCHMARKS_DIR if DEFAULT_BENCHMARKS_DIR.is_dir() else None


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m costa bench", description="Benchmarks that print ratios against a baseline in the same run."
    )
    sub = p.add_subparsers(dest="bench", required=True)
    for name in RUNNERS:
        module = importlib.import_module(f"bench.{name}")
        sp = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(sp)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Parse `argv` (default: the process arguments), run the chosen benchmark and return its exit code."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = _parser().parse_args(argv)
    found = benchmarks_dir()
    if found is not None:  # scene generators read shared photos through this variable, never by a path of their own
        os.environ.setdefault("COSTA_BENCHMARKS_DIR", str(found))
    try:
        return int(importlib.import_module(f"bench.{args.bench}").run(args))
    except CostaError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
