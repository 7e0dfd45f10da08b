"""FaSTA* fast–slow vs eager and lazy A* on a seeded task stream, learning as it runs (see costa.bench.fasta_bench).

python bench/fasta.py [--small] [--seed 0]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing


def main() -> None:
    from costa.bench.fasta_bench import main as bench_main

    bench_main()


if __name__ == "__main__":
    main()
