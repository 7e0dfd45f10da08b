"""Load and validate tool_tables/: subtask kinds, tool specs and benchmark rows.

`parse_tables` is pure (documents in, `Tables` out) so the validation is testable without files; `load_tables` reads
the three files. Every problem raises `TableError` naming the file and the row, because a wrong table silently steers
the search.

Example:
    >>> t = load_tables()
    >>> t.tools["rapidocr_detect"].outputs
    ('text_regions',)
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import io
import re
from collections.abc import Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, TypeVar, cast

import yaml

from costa.errors import TableError
from costa.types import ARTIFACT_TYPES, BenchmarkRow, ParamSpec, Requirements, SubtaskSpec, ToolSpec

TABLES_DIR = Path(__file__).resolve().parent.parent / "tool_tables"
SUBTASKS_FILE = "subtasks.yaml"
TOOLS_FILE = "tools.yaml"
BENCHMARK_FILE = "benchmark.csv"
BENCHMARK_COLUMNS = ("tool", "subtask", "seconds", "quality", "pass_rate", "source", "n")
#: Where a row's quality came from (see `BenchmarkRow`); the first three are measured here and need n > 0.
BenchmarkSource = Literal["truth", "check", "real", "paper", "estimate"]
BENCHMARK_SOURCES: tuple[BenchmarkSource, ...] = ("truth", "check", "real", "paper", "estimate")
_T = TypeVar("_T")

_TOOL_KEYS = {
    "id",
    "family",
    "backend",
    "status",
    "subtasks",
    "inputs",
    "outputs",
    "params",
    "requirements",
    "licence",
    "description",
    "class",
    "planned_reason",
    "in_region",
}
#: Boolean category columns of subtasks.yaml (each defaults to false; see `SubtaskSpec`).
_SUBTASK_FLAGS = (
    "creates",
    "edits_text",
    "reads_text",
    "runs_first",
    "exclusive",
    "whole_image",
    "resizes",
    "unreferenced",
    "invents",
)
_SUBTASK_KEYS = {"id", "name", "produces", "edits_image", "description", "target", *_SUBTASK_FLAGS}
_REQUIRED_TOOL_KEYS = {"id", "family", "backend", "status", "subtasks", "inputs", "outputs"}


@dataclass(frozen=True)
class Tables:
    """The validated tables. Mappings are read-only."""

    subtasks: Mapping[str, SubtaskSpec]
    tools: Mapping[str, ToolSpec]
    benchmark: Mapping[tuple[str, str], BenchmarkRow]

    def tools_for(self, subtask: str) -> tuple[ToolSpec, ...]:
        return tuple(t for t in self.tools.values() if subtask in t.subtasks)

    def ready_tools(self) -> tuple[ToolSpec, ...]:
        return tuple(t for t in self.tools.values() if t.status == "ready")


def _str_tuple(value: Any, where: str, field: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TableError(f"{where}: {field!r} must be a list of strings, got {value!r}")
    return tuple(value)


def _parse_subtasks(doc: Any, where: str) -> dict[str, SubtaskSpec]:
    if not isinstance(doc, dict) or not isinstance(doc.get("subtasks"), list):
        raise TableError(f"{where}: expected a mapping with a 'subtasks' list")
    out: dict[str, SubtaskSpec] = {}
    for i, row in enumerate(doc["subtasks"]):
        at = f"{where} row {i + 1}"
        if not isinstance(row, dict):
            raise TableError(f"{at}: expected a mapping, got {row!r}")
        missing = {"id", "name", "produces", "edits_image"} - set(row)
        if missing:
            raise TableError(f"{at} ({row.get('id')!r}): missing {sorted(missing)}")
        extra = set(row) - _SUBTASK_KEYS
        if extra:
            raise TableError(f"{at} ({row.get('id')!r}): unknown keys {sorted(extra)}")
        sid = row["id"]
        if sid in out:
            raise TableError(f"{at}: duplicate subtask id {sid!r}")
        if row["produces"] not in ARTIFACT_TYPES:
            raise TableError(f"{at} ({sid!r}): unknown artifact type {row['produces']!r}; known: {ARTIFACT_TYPES}")
        target = row.get("target", "none")
        if target not in ("object", "text", "none"):
            raise TableError(f"{at} ({sid!r}): target must be object, text or none, got {target!r}")
        flags: dict[str, bool] = {}
        for key in ("edits_image", *_SUBTASK_FLAGS):
            value = row.get(key, False)
            if not isinstance(value, bool):
                raise TableError(f"{at} ({sid!r}): {key} must be true or false, got {value!r}")
            flags[key] = value
        out[sid] = SubtaskSpec(
            id=sid,
            name=str(row["name"]),
            produces=row["produces"],
            description=str(row.get("description", "")),
            target=target,
            **flags,
        )
    return out


_PARAM_KEYS = {"type", "default", "min", "max", "choices", "retries", "doc"}
_PARAM_TYPES = ("float", "int", "str", "bool")


def _parse_params(raw: Any, at: str, ready: bool) -> tuple[ParamSpec, ...]:
    """Parameters with their type, default, range or choices and retry schedule; a ready tool must type each one,
    and the default and every retry value must fit the declaration."""
    from costa.tools.params import param_problem  # the one definition of "fits", shared with Tool.__call__

    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise TableError(
            f"{at}: 'params' must be a mapping of name -> {{type, default, min, max, retries}}, got {raw!r}"
        )
    params = []
    for name, body in raw.items():
        if not isinstance(body, dict) or "default" not in body:
            raise TableError(f"{at}: parameter {name!r} needs a 'default', got {body!r}")
        extra = set(body) - _PARAM_KEYS
        if extra:
            raise TableError(f"{at}: parameter {name!r} has unknown keys {sorted(extra)}; known: {sorted(_PARAM_KEYS)}")
        kind = body.get("type")
        if kind is None and ready:
            raise TableError(f"{at}: parameter {name!r} of a ready tool needs a 'type' ({', '.join(_PARAM_TYPES)})")
        if kind is not None and kind not in _PARAM_TYPES:
            raise TableError(f"{at}: parameter {name!r} type must be one of {_PARAM_TYPES}, got {kind!r}")
        retries = body.get("retries", [])
        if not isinstance(retries, list):
            raise TableError(f"{at}: parameter {name!r} 'retries' must be a list, got {retries!r}")
        choices = body.get("choices", [])
        if not isinstance(choices, list):
            raise TableError(f"{at}: parameter {name!r} 'choices' must be a list, got {choices!r}")
        bounds: list[float | None] = []
        for key in ("min", "max"):
            b = body.get(key)
            if b is not None and (isinstance(b, bool) or not isinstance(b, int | float)):
                raise TableError(f"{at}: parameter {name!r} {key} must be a number, got {b!r}")
            bounds.append(b)
        low, high = bounds
        spec = ParamSpec(
            name, body["default"], tuple(retries), str(body.get("doc", "")), kind, low, high, tuple(choices)
        )
        if kind is not None:
            for label, value in [("default", spec.default), *(("retry", r) for r in spec.retries)]:
                problem = param_problem(spec, value)
                if problem:
                    raise TableError(f"{at}: parameter {name!r} {label}: {problem}")
        params.append(spec)
    return tuple(params)


def _parse_tools(doc: Any, where: str, subtasks: Mapping[str, SubtaskSpec]) -> dict[str, ToolSpec]:
    if not isinstance(doc, dict) or not isinstance(doc.get("tools"), list):
        raise TableError(f"{where}: expected a mapping with a 'tools' list")
    out: dict[str, ToolSpec] = {}
    for i, row in enumerate(doc["tools"]):
        at = f"{where} row {i + 1}"
        if not isinstance(row, dict):
            raise TableError(f"{at}: expected a mapping, got {row!r}")
        at = f"{at} ({row.get('id')!r})"
        missing = _REQUIRED_TOOL_KEYS - set(row)
        if missing:
            raise TableError(f"{at}: missing {sorted(missing)}")
        extra = set(row) - _TOOL_KEYS
        if extra:
            raise TableError(f"{at}: unknown keys {sorted(extra)}")
        tid = row["id"]
        if tid in out:
            raise TableError(f"{at}: duplicate tool id {tid!r}")
        if row["backend"] not in ("embedded", "neural", "api"):
            raise TableError(f"{at}: backend must be embedded, neural or api, got {row['backend']!r}")
        if row["status"] not in ("ready", "planned"):
            raise TableError(f"{at}: status must be ready or planned, got {row['status']!r}")
        impl = row.get("class")
        planned_reason = str(row.get("planned_reason") or "").strip()
        if row["status"] == "planned" and not planned_reason:
            raise TableError(f"{at}: a planned tool must say in 'planned_reason' why it is not implemented")
        if row["status"] == "ready" and planned_reason:
            raise TableError(f"{at}: a ready tool has no 'planned_reason'")
        if row["status"] == "ready" and impl is None:
            raise TableError(f"{at}: a ready tool must name its class as 'module:Class'")
        if impl is not None and (not isinstance(impl, str) or not re.fullmatch(r"[\w.]+:\w+", impl)):
            raise TableError(f"{at}: 'class' must be 'package.module:Class', got {impl!r}")
        serves = _str_tuple(row["subtasks"], at, "subtasks")
        if not serves:
            raise TableError(f"{at}: serves no subtask")
        for s in serves:
            if s not in subtasks:
                raise TableError(f"{at}: unknown subtask {s!r}")
        inputs = _str_tuple(row["inputs"], at, "inputs")
        outputs = _str_tuple(row["outputs"], at, "outputs")
        for t in inputs + outputs:
            if t not in ARTIFACT_TYPES:
                raise TableError(f"{at}: unknown artifact type {t!r}; known: {ARTIFACT_TYPES}")
        if not outputs:
            raise TableError(f"{at}: a tool must output something")
        req = row.get("requirements") or {}
        if not isinstance(req, dict) or set(req) - {"python", "weights", "apt", "gpu"}:
            raise TableError(f"{at}: 'requirements' takes python, weights, apt, gpu; got {req!r}")
        requirements = Requirements(
            python=_str_tuple(req.get("python", []), at, "requirements.python"),
            weights=_str_tuple(req.get("weights", []), at, "requirements.weights"),
            apt=_str_tuple(req.get("apt", []), at, "requirements.apt"),
            gpu=bool(req.get("gpu", False)),
        )
        in_region = row.get("in_region", False)
        if not isinstance(in_region, bool):
            raise TableError(f"{at}: 'in_region' must be true or false, got {in_region!r}")
        if in_region and not any(subtasks[s].whole_image and subtasks[s].target == "none" for s in serves):
            raise TableError(
                f"{at}: 'in_region' is for an image-wide editor that a target may limit (a whole_image kind with "
                f"target none); it serves {list(serves)}"
            )
        out[tid] = ToolSpec(
            id=tid,
            family=str(row["family"]),
            backend=row["backend"],
            status=row["status"],
            subtasks=serves,
            inputs=inputs,
            outputs=outputs,
            params=_parse_params(row.get("params"), at, row["status"] == "ready"),
            requirements=requirements,
            licence=str(row.get("licence", "")),
            description=str(row.get("description", "")),
            impl=impl,
            planned_reason=planned_reason,
            in_region=in_region,
        )
    return out


def _parse_benchmark(
    text: str, where: str, tools: Mapping[str, ToolSpec], subtasks: Mapping[str, SubtaskSpec]
) -> dict[tuple[str, str], BenchmarkRow]:
    reader = csv.DictReader(io.StringIO(text))
    if tuple(reader.fieldnames or ()) != BENCHMARK_COLUMNS:
        raise TableError(f"{where}: header must be {','.join(BENCHMARK_COLUMNS)}, got {reader.fieldnames}")
    out: dict[tuple[str, str], BenchmarkRow] = {}
    for line, row in enumerate(reader, start=2):
        at = f"{where} line {line}"
        tool, subtask = row["tool"], row["subtask"]
        if tool not in tools:
            raise TableError(f"{at}: unknown tool {tool!r}")
        if subtask not in subtasks:
            raise TableError(f"{at}: unknown subtask {subtask!r}")
        if subtask not in tools[tool].subtasks:
            raise TableError(f"{at}: tool {tool!r} does not serve subtask {subtask!r} in tools.yaml")
        if (tool, subtask) in out:
            raise TableError(f"{at}: duplicate row for ({tool}, {subtask})")
        try:
            seconds, quality, n = float(row["seconds"]), float(row["quality"]), int(row["n"] or 0)
        except (TypeError, ValueError) as e:
            raise TableError(f"{at}: seconds, quality and n must be numbers: {e}") from e
        if seconds <= 0:
            raise TableError(f"{at}: seconds must be > 0, got {seconds}")
        if not 0.0 <= quality <= 1.0:
            raise TableError(f"{at}: quality must be in [0, 1], got {quality}")
        source = row["source"]
        if source not in BENCHMARK_SOURCES:
            raise TableError(f"{at}: source must be one of {', '.join(BENCHMARK_SOURCES)}, got {source!r}")
        measured = source in ("truth", "check", "real")
        if measured and n <= 0:
            raise TableError(f"{at}: a row measured against {source} needs n > 0")
        raw_pass = (row["pass_rate"] or "").strip()
        if measured and not raw_pass:
            raise TableError(f"{at}: a row measured against {source} needs its pass_rate")
        try:
            pass_rate = float(raw_pass) if raw_pass else None
        except ValueError as e:
            raise TableError(f"{at}: pass_rate must be a number or empty, got {raw_pass!r}") from e
        if pass_rate is not None and not 0.0 <= pass_rate <= 1.0:
            raise TableError(f"{at}: pass_rate must be in [0, 1], got {pass_rate}")
        out[(tool, subtask)] = BenchmarkRow(
            tool,
            subtask,
            seconds,
            quality,
            cast(BenchmarkSource, source),  # one of BENCHMARK_SOURCES, checked above
            n,
            pass_rate,
        )
    for t in tools.values():
        for s in t.subtasks:
            if (t.id, s) not in out:
                raise TableError(f"{where}: missing benchmark row for tool {t.id!r} on subtask {s!r}")
    return out


def parse_tables(subtasks_doc: Any, tools_doc: Any, benchmark_csv: str, names: tuple[str, str, str]) -> Tables:
    """Validate parsed documents into `Tables`; `names` are the three file names used in error messages."""
    subtasks = _parse_subtasks(subtasks_doc, names[0])
    tools = _parse_tools(tools_doc, names[1], subtasks)
    benchmark = _parse_benchmark(benchmark_csv, names[2], tools, subtasks)
    for sid in subtasks:
        if not any(sid in t.subtasks for t in tools.values()):
            raise TableError(f"{names[0]}: subtask {sid!r} has no tool in {names[1]}")
    return Tables(MappingProxyType(subtasks), MappingProxyType(tools), MappingProxyType(benchmark))


def load_tables(directory: Path | str | None = None) -> Tables:
    """Read and validate subtasks.yaml, tools.yaml and benchmark.csv from `directory` (default: tool_tables/)."""
    d = Path(directory) if directory is not None else TABLES_DIR
    paths = (d / SUBTASKS_FILE, d / TOOLS_FILE, d / BENCHMARK_FILE)
    docs = []
    for p in paths[:2]:
        try:
            docs.append(yaml.safe_load(p.read_text(encoding="utf-8")))
        except (OSError, yaml.YAMLError) as e:
            raise TableError(f"{p}: cannot read: {e}") from e
    try:
        bench = paths[2].read_text(encoding="utf-8")
    except OSError as e:
        raise TableError(f"{paths[2]}: cannot read: {e}") from e
    return parse_tables(docs[0], docs[1], bench, tuple(str(p) for p in paths))  # type: ignore[arg-type]


@functools.lru_cache(maxsize=8)
def load_subtasks(path: Path | str | None = None) -> Mapping[str, SubtaskSpec]:
    """Read and validate a subtasks table alone (default tool_tables/subtasks.yaml; cached): the planner needs the
    kinds, not the tools."""
    path = Path(path) if path is not None else TABLES_DIR / SUBTASKS_FILE
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise TableError(f"{path}: cannot read: {e}") from e
    return MappingProxyType(_parse_subtasks(doc, str(path)))


class KindSet(AbstractSet[str]):
    """The subtask ids whose subtasks.yaml row has `column == value`, read on first use (nothing runs at import).

    Code names a category (`KindSet("reads_text")`) instead of listing kinds, so a new kind joins every category by
    its row alone.

    Example:
        >>> "text_extraction" in KindSet("reads_text"), "object_removal" in KindSet("reads_text")
        (True, False)
        >>> sorted(KindSet("runs_first"))
        ['outpainting']
    """

    def __init__(self, column: str, value: object = True) -> None:
        if column not in {f.name for f in dataclasses.fields(SubtaskSpec)}:
            raise TableError(f"subtasks.yaml has no column {column!r}")
        self.column, self.value = column, value

    def _kinds(self) -> frozenset[str]:
        return frozenset(k for k, spec in load_subtasks().items() if getattr(spec, self.column) == self.value)

    def __contains__(self, kind: object) -> bool:
        return kind in self._kinds()

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._kinds()))

    def __len__(self) -> int:
        return len(self._kinds())

    @classmethod
    def _from_iterable(cls, it: Iterable[_T]) -> frozenset[_T]:  # set operators (|, &, -) give plain frozensets
        return frozenset(it)

    def __repr__(self) -> str:
        return f"KindSet({self.column!r}, {self.value!r})"
