"""Offline planner on the shared benchmark instructions: coverage, speed, reference plans (costa.bench.planner_bench).

python bench/planner.py [--data ../shared/benchmarks]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing


def main() -> None:
    from costa.bench.planner_bench import format_planner_report, run_planner_bench

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=None, help="benchmark folder (default ../shared/benchmarks)")
    args = p.parse_args()
    print(format_planner_report(run_planner_bench(args.data)))


if __name__ == "__main__":
    main()
