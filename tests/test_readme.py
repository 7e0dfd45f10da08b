"""The README stays true about the interfaces it lists: every environment variable the code reads is in its tables,
and every CLI command and benchmark is in its command list."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _code_variables() -> set[str]:
    found: set[str] = set()
    for folder in ("costa", "ui", "bench"):
        for path in (ROOT / folder).rglob("*.py"):
            found.update(re.findall(r"\bCOSTA_[A-Z][A-Z_]*[A-Z]\b", path.read_text(encoding="utf-8")))
    found.update(re.findall(r"\bCOSTA_[A-Z][A-Z_]*[A-Z]\b", (ROOT / "app.py").read_text(encoding="utf-8")))
    return found


def test_every_environment_variable_the_code_reads_is_in_the_readmes_tables() -> None:
    section = README[README.index("## Environment variables") : README.index("## How it works")]
    listed = set(re.findall(r"`(COSTA_[A-Z_]+)`", section))
    assert sorted(_code_variables() - listed) == []


def test_every_benchmark_and_cli_command_is_in_the_command_list() -> None:
    from bench.cli import RUNNERS

    commands = README[README.index("## Command line") : README.index("## Command line") + 12_000]
    assert [name for name in RUNNERS if f"python -m costa bench {name}" not in commands] == []
    from costa.cli import _parser

    top = next(a for a in _parser()._actions if a.dest == "command")  # the subcommands the CLI accepts
    names = list(top.choices or ())
    assert names and [name for name in names if f"python -m costa {name} " not in README] == []
