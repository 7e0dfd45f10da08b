"""Run the search benchmark and print its report: `python bench/search.py [--seed N] [--plans N]`.

Lazy against eager expansion on seeded plans over the real tables, and the search's own overhead per subtask on the
real tables and on a synthetic 500-tool table, in one run (see `costa.bench.search_bench`). The whole run with the
defaults takes a few minutes on two cores, almost all of it on the synthetic table.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the benchmark, print the report; return 0 when every target is met, else 1."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="seeds plans, simulated outcomes and the synthetic table")
    parser.add_argument("--plans", type=int, default=40, help="plans on the real tables (default 40)")
    parser.add_argument(
        "--synthetic-plans", type=int, default=None, help="plans on the synthetic table (default --plans)"
    )
    parser.add_argument("--synthetic-tools", type=int, default=500, help="tools in the synthetic table (default 500)")
    parser.add_argument("--alpha", type=float, default=1.0, help="cost/quality trade-off in [0, 2] (default 1)")
    parser.add_argument("--threshold", type=float, default=0.8, help="quality a step must reach (default 0.8)")
    parser.add_argument("--per-plan", action="store_true", help="also list every plan")
    args = parser.parse_args(argv)

    try:
        import costa  # noqa: F401
    except ModuleNotFoundError:  # run from a checkout without `pip install -e .`
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from costa.bench.search_bench import format_report, run_search_bench

    report = run_search_bench(
        seed=args.seed,
        n_plans=args.plans,
        alpha=args.alpha,
        threshold=args.threshold,
        synthetic_plans=args.synthetic_plans,
        synthetic_tools=args.synthetic_tools,
    )
    print(format_report(report, per_plan=args.per_plan))
    return 0 if all(t.met for t in report.targets) else 1


if __name__ == "__main__":
    sys.exit(main())
