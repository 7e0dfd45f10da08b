"""Colour grounder cost at 0.4 MP vs 12 MP in one run (see costa.bench.grounding_bench).

python bench/grounding.py [--runs 3]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing


def main() -> None:
    from costa.bench.grounding_bench import run_grounding_bench

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=3, help="timed runs per size (median reported)")
    print(run_grounding_bench(runs=p.parse_args().runs))


if __name__ == "__main__":
    main()
