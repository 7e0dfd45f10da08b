"""Every docstring example in costa/, ui/ and bench/ runs (they are documentation, so they must stay true)."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _modules() -> list[str]:
    names = []
    for package in ("costa", "ui", "bench"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.name == "__main__.py":
                continue  # running it would start the command line
            if ">>> " not in path.read_text(encoding="utf-8"):
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


MODULES = _modules()


def test_the_examples_are_found() -> None:
    assert len(MODULES) >= 20 and "costa.search" in MODULES and "costa.tables" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
