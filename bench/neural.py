"""Neural tools at real size with random weights: seconds per call and per diffusion step, peak memory.

python bench/neural.py [--device cpu|cuda] [--steps 2] [--write]    (see costa.bench.neural_bench)
On a GPU: python bench/neural.py --device cuda --steps 20 --write  (about 2 minutes on one recent GPU)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing


def main() -> None:
    from costa.bench.neural_bench import run_neural_bench

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cpu")
    p.add_argument("--steps", type=int, default=2, help="diffusion steps timed (20 on a GPU)")
    p.add_argument("--write", action="store_true", help="record rows in tool_tables/benchmark_devices.csv")
    a = p.parse_args()
    print(run_neural_bench(a.device, a.steps, a.write))


if __name__ == "__main__":
    main()
