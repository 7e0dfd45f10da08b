"""`python -m costa models list|pull|verify`: what each neural tool needs, present or missing, sizes, where.

Pure formatting over the resolver (`costa.models.weights`) and the tables; nothing here imports torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from costa.config import Settings
from costa.errors import InputError
from costa.models.weights import ModelSpec, describe_missing, load_model_specs, locate, pull, verify
from costa.tables import Tables


@dataclass(frozen=True)
class ModelRow:
    """One line of `models list`: a model, the tools that need it, and where it is (or should be)."""

    model_id: str
    tools: tuple[str, ...]
    present: bool
    where: str
    size_mb: float
    source: str


def needed_models(tables: Tables) -> dict[str, tuple[str, ...]]:
    """Model id → the ready neural tools whose table rows name it, in table order."""
    out: dict[str, list[str]] = {}
    for spec in tables.tools.values():
        if spec.backend != "neural" or spec.status != "ready":
            continue
        for w in spec.requirements.weights:
            out.setdefault(w, []).append(spec.id)
    return {k: tuple(v) for k, v in out.items()}


def list_models(tables: Tables, settings: Settings, specs: dict[str, ModelSpec] | None = None) -> list[ModelRow]:
    specs = load_model_specs() if specs is None else specs
    rows = []
    for model_id, tools in needed_models(tables).items():
        status = locate(model_id, settings, specs)
        if status.path is not None:
            size = (
                sum(p.stat().st_size for p in status.path.rglob("*") if p.is_file())
                if status.path.is_dir()
                else (status.path.stat().st_size)
            )
            rows.append(ModelRow(model_id, tools, True, str(status.path), size / 2**20, status.source))
        else:
            rows.append(ModelRow(model_id, tools, False, describe_missing(status, settings), status.spec.size_mb, ""))
    return rows


def format_list(rows: Sequence[ModelRow]) -> str:
    lines = [f"{sum(r.present for r in rows)} of {len(rows)} models present"]
    for r in rows:
        state = "present" if r.present else "missing"
        size = f"{r.size_mb:,.0f} MB" if r.size_mb >= 1 else f"{r.size_mb * 1024:,.0f} KB"
        lines.append(f"  {state} {r.model_id:45} {size:>9}  for {', '.join(r.tools)}")
        lines.append(f"          {('at ' + r.where + ' (' + r.source + ')') if r.present else r.where}")
    return "\n".join(lines)


def pull_models(
    names: Sequence[str], settings: Settings, explicit: bool, specs: dict[str, ModelSpec] | None = None
) -> list[str]:
    """Download `names` into COSTA_MODELS_DIR; refuse unless COSTA_ALLOW_DOWNLOADS=1 or `explicit` (--yes).

    Returns one line per model. Raises `InputError` when refused or when no name is given.
    """
    if not names:
        raise InputError("name the models to pull (see `python -m costa models list`)")
    if not (settings.allow_downloads or explicit):
        raise InputError(
            "downloads are off: set COSTA_ALLOW_DOWNLOADS=1 or pass --yes to download "
            + ", ".join(names)
            + " into COSTA_MODELS_DIR"
        )
    out = []
    for name in names:
        path = pull(name, settings, specs)
        out.append(f"pulled {name} into {path}")
    return out


def verify_models(
    names: Sequence[str], tables: Tables, settings: Settings, specs: dict[str, ModelSpec] | None = None
) -> tuple[bool, list[str]]:
    """Verify `names` (default: every model a neural tool needs); (all ok, one line per model)."""
    names = list(names) or list(needed_models(tables))
    ok, lines = True, []
    for name in names:
        v = verify(name, settings, specs)
        ok &= v.ok
        if v.ok:
            lines.append(f"  ok      {name} ({v.bytes_on_disk / 2**20:,.1f} MB)")
        else:
            lines.append(f"  problem {name}: {'; '.join(v.problems)}")
    return ok, lines
