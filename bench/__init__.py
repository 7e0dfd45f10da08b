"""Benchmark runners and reports, outside the library: `python -m costa bench NAME …` or `python -m bench NAME …`.

Each runner module (`bench/<name>.py`) has `HELP`, `add_arguments(parser)` and `run(args) -> int`; `bench/cli.py`
lists them. Shared scene generators and ground-truth cases live in `costa.synthetic` (tests use them too; fakes
for tests in `costa.testing`).
"""
