"""The code's shape, measured from its source: import cycles, module and function sizes, parameter counts.

`tests/test_layout.py` holds the limits and the allowlist; this module only measures, so the same numbers can be
printed for a before/after comparison on any checkout:

    python -m tests.layout_check            # this checkout
    python -m tests.layout_check /work/main # another one

An import counts wherever it is written (module level or inside a function: an import moved into a function to
dodge a cycle is still a cycle), except under `if TYPE_CHECKING:` (type-only, never executed). `from a.b import c`
is an edge to the module `a.b.c` when that file exists, else to `a.b`.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The packages whose shape is checked (the benchmarks and tests are outside the library).
PACKAGES = ("costa", "ui")
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 100
MAX_PARAMETERS = 8


@dataclass(frozen=True)
class Function:
    """One function or method: where it is, how many lines it spans (decorators excluded), its parameters."""

    module: str
    name: str  # qualified within the module: "Class.method", "outer.inner"
    line: int
    lines: int
    parameters: int  # every parameter but a method's self / cls

    @property
    def key(self) -> str:
        return f"{self.module}:{self.name}"


def module_files(root: Path = ROOT, packages: Iterable[str] = PACKAGES) -> dict[str, Path]:
    """Dotted module name → file, for every .py under the packages (a package is its `__init__`)."""
    out: dict[str, Path] = {}
    for pkg in packages:
        for path in sorted((root / pkg).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST, type_only: bool = False) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, skipping the bodies of `if TYPE_CHECKING:` unless `type_only`."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if not type_only and isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def imports_of(module: str, path: Path, known: Iterable[str], type_only: bool = False) -> set[str]:
    """The checked modules `module` imports (at run time, wherever the import is written; `type_only` adds the
    imports under `if TYPE_CHECKING:`)."""
    names = set(known)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in _import_nodes(tree, type_only):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in names)
            continue
        target = _resolve(module, path.name == "__init__.py", node)
        for alias in node.names:
            sub = f"{target}.{alias.name}"
            if sub in names:
                found.add(sub)
            elif target in names:
                found.add(target)
    found.discard(module)
    return found


def import_graph(root: Path = ROOT, packages: Iterable[str] = PACKAGES, type_only: bool = False) -> dict[str, set[str]]:
    files = module_files(root, packages)
    return {m: imports_of(m, p, files, type_only) for m, p in files.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm), each sorted, largest first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out, key=lambda c: (-len(c), c))


def module_lines(root: Path = ROOT, packages: Iterable[str] = PACKAGES) -> dict[str, int]:
    return {m: len(p.read_text(encoding="utf-8").splitlines()) for m, p in module_files(root, packages).items()}


def functions(root: Path = ROOT, packages: Iterable[str] = PACKAGES) -> list[Function]:
    """Every function and method (nested ones too, each counted on its own and inside its parent's lines)."""
    out: list[Function] = []
    for module, path in module_files(root, packages).items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))

        def walk(node: ast.AST, prefix: str, in_class: bool, module: str = module) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.ClassDef):
                    walk(child, f"{prefix}{child.name}.", True)
                elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                    a = child.args
                    params = [*a.posonlyargs, *a.args, *a.kwonlyargs]
                    count = len(params) + (a.vararg is not None) + (a.kwarg is not None)
                    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in child.decorator_list)
                    if in_class and params and params[0].arg in ("self", "cls") and not static:
                        count -= 1
                    lines = (child.end_lineno or child.lineno) - child.lineno + 1
                    out.append(Function(module, prefix + child.name, child.lineno, lines, count))
                    walk(child, f"{prefix}{child.name}.", False)
                else:
                    walk(child, prefix, in_class)

        walk(tree, "", False)
    return out


@dataclass(frozen=True)
class Report:
    cycles: list[list[str]]
    typed_cycles: list[list[str]]  # with the type-only imports too (a mixin annotating `self` as its host)
    long_modules: dict[str, int]
    long_functions: dict[str, int]
    wide_functions: dict[str, int]


def report(root: Path = ROOT) -> Report:
    fns = functions(root)
    return Report(
        cycles(import_graph(root)),
        cycles(import_graph(root, type_only=True)),
        {m: n for m, n in sorted(module_lines(root).items()) if n > MAX_MODULE_LINES},
        {f.key: f.lines for f in fns if f.lines > MAX_FUNCTION_LINES},
        {f.key: f.parameters for f in fns if f.parameters > MAX_PARAMETERS},
    )


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0]).resolve() if args else ROOT
    r = report(root)
    print(f"import cycles in {', '.join(PACKAGES)}: {len(r.cycles)}")
    for c in r.cycles:
        print(f"  {len(c)} modules: {' ↔ '.join(c)}")
    extra = [c for c in r.typed_cycles if c not in r.cycles]
    print(f"import cycles counting type-only imports too: {len(r.typed_cycles)}")
    for c in extra:
        print(f"  {len(c)} modules: {' ↔ '.join(c)}")
    print(f"modules over {MAX_MODULE_LINES} lines: {len(r.long_modules)}")
    for m, n in sorted(r.long_modules.items(), key=lambda kv: -kv[1]):
        print(f"  {n:5}  {m}")
    print(f"functions over {MAX_FUNCTION_LINES} lines: {len(r.long_functions)}")
    for k, n in sorted(r.long_functions.items(), key=lambda kv: -kv[1]):
        print(f"  {n:5}  {k}")
    print(f"functions with more than {MAX_PARAMETERS} parameters: {len(r.wide_functions)}")
    for k, n in sorted(r.wide_functions.items(), key=lambda kv: -kv[1]):
        print(f"  {n:5}  {k}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
