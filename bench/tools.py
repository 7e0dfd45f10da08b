"""Measure every ready embedded tool on synthetic cases (see costa.bench.tools_bench); `--write` updates the table.

python bench/tools.py [--cases 12] [--seed 0] [--write] [--csv PATH]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing


def main() -> None:
    from costa.bench.tools_bench import run_tools_bench

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cases", type=int, default=12, help="synthetic cases per tool × subtask")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--write", action="store_true", help="rewrite the benchmark CSV with the measured rows")
    p.add_argument("--csv", type=Path, default=None, help="CSV to rewrite (default tool_tables/benchmark.csv)")
    args = p.parse_args()
    print(run_tools_bench(cases=args.cases, seed=args.seed, write=args.write, csv_path=args.csv))


if __name__ == "__main__":
    main()
