"""Which tool families the Ray runner serves, and with what: tool_tables/deployments.csv.

One row per tool family of tools.yaml. `placement` is `serve` (the family is one Ray Serve deployment: `replicas`
replicas, each holding `gpu_fraction` of a GPU and `cpus` CPUs, each loading its models once) or `in_process` (cheap
embedded tools: they run in the calling process under any runner, and the resource columns stay empty). Tools whose
backend is `api` (a request to an endpoint, no model here) run in process even in a served family.

`max_batch` and `batch_wait_ms` (served rows; empty: 1 and 10): a replica gathers up to `max_batch` concurrent calls
of one tool, waiting at most `batch_wait_ms` after the first, into one pass of the model — only for tools whose
class batches (`costa.tools.base.Tool.batches`: CLIP, BLIP, Grounding DINO, RT-DETR, SAM's image encoder, depth);
the others' calls (the diffusion pipelines, the original-code backends) run one by one as they come. A batch holds
GPU memory for all its calls: size it with the replica's GPU share. `cpu_max_batch` (empty: 1, no batching) is the
batch size when the replicas run on CPUs (`costa serve --cpu-only`): on CPU cores a large-input vision model is
compute-bound at one image and a batch costs as much per call or more (README, "Batching"), so only the families
whose batch was measured to pay there have one.

`parse_deployments` is pure (text in, rows out) and every problem raises `TableError` naming the file, the line and
the value; `check_families` keeps the table and tools.yaml in agreement.

Example:
    >>> head = "family,placement,replicas,gpu_fraction,cpus,max_batch,cpu_max_batch,batch_wait_ms,note\\n"
    >>> rows = parse_deployments(head + "sam,serve,2,0.25,1,4,,,masks\\nclip,serve,1,0.1,1,8,4,20,clip\\n")
    >>> rows["sam"].replicas, rows["sam"].gpu_fraction, rows["sam"].served, rows["sam"].batch(cpu_only=True)
    (2, 0.25, True, 1)
    >>> rows["clip"].batch(cpu_only=False), rows["clip"].batch(cpu_only=True), rows["clip"].batch_wait_s
    (8, 4, 0.02)
"""

from __future__ import annotations

import csv
import io
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Literal, cast

from costa.errors import TableError
from costa.types import ToolSpec

DEPLOYMENTS_FILE = "deployments.csv"
DEPLOYMENTS_COLUMNS = (
    "family", "placement", "replicas", "gpu_fraction", "cpus", "max_batch", "cpu_max_batch", "batch_wait_ms", "note",
)  # fmt: skip
Placement = Literal["serve", "in_process"]
PLACEMENTS: tuple[Placement, ...] = ("serve", "in_process")
#: The runner name of calls made in the calling process (the `in_process` placement, under any runner).
IN_PROCESS = "in_process"
#: Most replicas one row may ask for (a typo such as 100 would queue replicas no cluster can place).
MAX_REPLICAS = 64
#: The largest batch and the longest wait for one a row may ask for, and the wait when `batch_wait_ms` is empty.
MAX_BATCH, MAX_BATCH_WAIT_MS, BATCH_WAIT_MS = 256, 10_000, 10


@dataclass(frozen=True)
class Deployment:
    """One family's row: where its tools run and, when served, the resources of each replica."""

    family: str
    placement: Placement
    replicas: int = 0
    gpu_fraction: float = 0.0
    cpus: float = 0.0
    note: str = ""
    max_batch: int = 1
    batch_wait_s: float = BATCH_WAIT_MS / 1000
    cpu_max_batch: int = 1

    def batch(self, cpu_only: bool) -> int:
        """The most concurrent calls of one tool a replica runs in one pass: `max_batch` on GPUs, `cpu_max_batch`
        when the replicas run on CPUs."""
        return self.cpu_max_batch if cpu_only else self.max_batch

    @property
    def served(self) -> bool:
        return self.placement == "serve"

    @property
    def gpus(self) -> float:
        """GPUs the whole deployment holds (replicas × fraction)."""
        return self.replicas * self.gpu_fraction


def _number(raw: str, at: str, column: str, low: float, high: float, whole: bool = False) -> float:
    try:
        value = int(raw) if whole else float(raw)
    except ValueError as e:
        kind = "a whole number" if whole else "a number"
        raise TableError(f"{at}: {column} must be {kind}, got {raw!r}") from e
    if not low <= value <= high:
        raise TableError(f"{at}: {column} must be in [{low:g}, {high:g}], got {raw!r}")
    return value


def parse_deployments(text: str, where: str = DEPLOYMENTS_FILE) -> Mapping[str, Deployment]:
    """Validate the table's text into rows by family (read-only).

    Raises:
        TableError: a wrong header, an unknown placement, a served row without replicas or with a value out of
            range, an in-process row with resources, a duplicate family; the message names `where`, line and value.
    """
    reader = csv.DictReader(io.StringIO(text))
    if tuple(reader.fieldnames or ()) != DEPLOYMENTS_COLUMNS:
        raise TableError(f"{where}: header must be {','.join(DEPLOYMENTS_COLUMNS)}, got {reader.fieldnames}")
    out: dict[str, Deployment] = {}
    for line, row in enumerate(reader, start=2):
        at = f"{where} line {line}"
        if None in row or any(v is None for v in row.values()):
            raise TableError(f"{at}: expected {len(DEPLOYMENTS_COLUMNS)} columns ({','.join(DEPLOYMENTS_COLUMNS)})")
        family, placement = row["family"].strip(), row["placement"].strip()
        if not family:
            raise TableError(f"{at}: family is empty")
        if family in out:
            raise TableError(f"{at}: duplicate family {family!r}")
        if placement not in PLACEMENTS:
            raise TableError(f"{at} ({family!r}): placement must be serve or in_process, got {placement!r}")
        resources = {c: row[c].strip() for c in ("replicas", "gpu_fraction", "cpus")}
        batching = {c: row[c].strip() for c in ("max_batch", "cpu_max_batch", "batch_wait_ms")}
        note = row["note"].strip()
        if placement == "in_process":
            given = [f"{c}={v!r}" for c, v in (resources | batching).items() if v]
            if given:
                raise TableError(f"{at} ({family!r}): an in_process row takes no resources, got {', '.join(given)}")
            out[family] = Deployment(family, "in_process", note=note)
            continue
        missing = [c for c, v in resources.items() if not v]
        if missing:
            raise TableError(f"{at} ({family!r}): a served row needs {', '.join(missing)}")
        named = f"{at} ({family!r})"
        replicas = int(_number(resources["replicas"], named, "replicas", 1, MAX_REPLICAS, whole=True))
        gpu = _number(resources["gpu_fraction"], named, "gpu_fraction", 0.0, 1.0)
        cpus = _number(resources["cpus"], named, "cpus", 0.01, 256.0)
        batch, cpu_batch = (
            int(_number(batching[c] or "1", named, c, 1, MAX_BATCH, whole=True)) for c in ("max_batch", "cpu_max_batch")
        )
        wait = _number(batching["batch_wait_ms"] or str(BATCH_WAIT_MS), named, "batch_wait_ms", 0, MAX_BATCH_WAIT_MS)
        out[family] = Deployment(
            family, cast(Placement, placement), replicas, gpu, cpus, note, batch, wait / 1000, cpu_batch
        )
    return MappingProxyType(out)


def load_deployments(path: Path | str | None = None) -> Mapping[str, Deployment]:
    """Read and validate a deployments table (default tool_tables/deployments.csv)."""
    from costa.tables import TABLES_DIR

    p = Path(path) if path is not None else TABLES_DIR / DEPLOYMENTS_FILE
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise TableError(f"{p}: cannot read: {e}") from e
    return parse_deployments(text, str(p))


def check_families(
    rows: Mapping[str, Deployment], tools: Mapping[str, ToolSpec], where: str = DEPLOYMENTS_FILE
) -> None:
    """Refuse a table that disagrees with tools.yaml: every family there has exactly one row, and every row is a
    family there.

    Raises:
        TableError: naming the families missing from the table or unknown to tools.yaml.
    """
    families = {spec.family for spec in tools.values()}
    missing = sorted(families - set(rows))
    if missing:
        raise TableError(f"{where}: no row for tool famil{'y' if len(missing) == 1 else 'ies'} {', '.join(missing)}")
    unknown = sorted(set(rows) - families)
    if unknown:
        raise TableError(f"{where}: famil{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)} not in tools.yaml")


def is_served(spec: ToolSpec, rows: Mapping[str, Deployment]) -> bool:
    """Whether the Ray runner sends `spec`'s calls to its family's deployment (api tools never: no model here)."""
    row = rows.get(spec.family)
    return row is not None and row.served and spec.backend != "api"


def cpu_layout(rows: Mapping[str, Deployment], served: Collection[str], cpus: float, note: str) -> str:
    """A deployments table (CSV text) that serves the families in `served` with one CPU-only replica of `cpus` CPUs
    each (batching as `rows` says for CPUs: `cpu_max_batch`) and runs every other family of `rows` in process: the
    layout of the benchmarks and tests that run Ray on this GPU-less machine. Rows keep `rows`' order, so the result
    still agrees with tools.yaml (`check_families`).

    Raises:
        TableError: when `served` names a family `rows` does not have (a misspelt layout would serve nothing).
    """
    unknown = sorted(set(served) - set(rows))
    if unknown:
        raise TableError(
            f"{DEPLOYMENTS_FILE}: cannot serve unknown famil{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)}"
        )
    out = [",".join(DEPLOYMENTS_COLUMNS)]
    for family in rows:
        cpu_batch = rows[family].cpu_max_batch
        placement = f"serve,1,0,{cpus:g},{cpu_batch},{cpu_batch}," if family in served else "in_process,,,,,,"
        out.append(f"{family},{placement},{note}")
    return "\n".join(out) + "\n"
