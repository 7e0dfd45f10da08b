"""App start-up, first streamed event and 8 concurrent clients (see costa.bench.app_bench).

python bench/app.py [--starts 5] [--first-runs 10] [--clients 8] [--edits 5]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing


def main() -> None:
    from costa.bench.app_bench import main as bench_main

    bench_main()


if __name__ == "__main__":
    main()
