"""End-to-end `costa edit` latency, lazy vs eager search, in one run (see costa.bench.edit_bench).

python bench/edit.py [--runs 5]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing


def main() -> None:
    from costa.bench.edit_bench import run_edit_bench

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=5, help="runs per mode (lazy and eager)")
    args = p.parse_args()
    print(run_edit_bench(runs=args.runs))


if __name__ == "__main__":
    main()
