"""The library's boundaries: nothing in costa/ imports the app, the UI or the benchmarks, or reads outside the repo."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_the_library_does_not_import_the_app_ui_or_benchmarks() -> None:
    offenders = {
        str(p.relative_to(ROOT)): sorted(_imports(p) & {"app", "ui", "bench", "tests"})
        for p in (ROOT / "costa").rglob("*.py")
    }
    # The one exception: `python -m costa bench …` hands its arguments to bench/ (imported only for that command).
    offenders["costa/cli.py"] = [m for m in offenders.get("costa/cli.py", []) if m != "bench"]
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_library_names_no_folder_outside_the_repository() -> None:
    # Shared benchmark data reaches costa/ only through COSTA_BENCHMARKS_DIR (set by bench/cli.py and conftest.py).
    offenders = []
    for p in (ROOT / "costa").rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in ("shared", "../shared"):
                offenders.append(str(p.relative_to(ROOT)))
    assert offenders == []


def test_every_benchmark_runner_has_the_runner_interface() -> None:
    import importlib

    from bench.cli import RUNNERS

    for name in RUNNERS:
        module = importlib.import_module(f"bench.{name}")
        assert isinstance(module.HELP, str) and module.HELP, name
        assert callable(module.add_arguments) and callable(module.run), name
