"""How long `python -m costa store check` takes on a large store: build one of N versions (sessions of 100 small,
distinct images each, through `Store.add_version` like the app), then time `store check` (and `--deep`) as
subprocesses; the figure the check prints itself is its time without Python's start.

    python -m costa bench store_scale --versions 10000 [--home DIR] [--deep]   (or python -m bench.store_scale …)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from costa.store import Quotas, Store

PER_SESSION = 100


def build(home: Path, versions: int, side: int = 64) -> float:
    """A store under `home` with `versions` versions; returns the seconds it took."""
    t0 = time.perf_counter()
    store = Store(home, quotas=Quotas(0, 0, 0))
    rng = np.random.default_rng(0)
    sid, parent = "", None
    for i in range(versions):
        if i % PER_SESSION == 0:
            sid, parent = store.create_session(None).id, None
        image = rng.integers(0, 256, (side, side, 3), dtype=np.uint8)
        parent = store.add_version(sid, image, "upload" if parent is None else "turn", f"v{i}", parent).id
    return time.perf_counter() - t0


def time_check(home: Path, deep: bool = False) -> tuple[float, int, str]:
    """Seconds, exit status and last line of `python -m costa store check` on `home`."""
    env = {**os.environ, "COSTA_HOME": str(home)}
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "costa", "store", "check", *(["--deep"] if deep else [])], env=env,
                       capture_output=True, text=True, timeout=3600)  # fmt: skip
    lines = (r.stdout + r.stderr).strip().splitlines()
    return time.perf_counter() - t0, r.returncode, lines[-1] if lines else ""


HELP = "time `store check` (and --deep) on a store built with N versions (default 10,000)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--versions", type=int, default=10_000)
    p.add_argument("--home", type=Path, default=None, help="build here (default: a temporary folder)")
    p.add_argument("--deep", action="store_true", help="also time store check --deep (decodes every image)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(p)
    return run(p.parse_args(argv))


def run(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="costa-scale-") as tmp:
        home = args.home or Path(tmp) / "home"
        built = build(home, args.versions)
        print(f"built {args.versions:,} versions in {built:.1f} s")
        for deep in (False, True) if args.deep else (False,):
            seconds, rc, last = time_check(home, deep)
            print(f"store check{' --deep' if deep else ''}: {seconds:.2f} s (exit {rc}): {last}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
