"""The subtask ids a plan may use, read from tool_tables/subtasks.yaml next to the `costa` package."""

from __future__ import annotations

import functools
from pathlib import Path

from costa.errors import TableError

#: tool_tables/subtasks.yaml in the repository that holds this `costa` package (independent of the working directory).
SUBTASKS_YAML: Path = Path(__file__).resolve().parents[2] / "tool_tables" / "subtasks.yaml"


@functools.lru_cache(maxsize=8)
def load_subtask_kinds(path: Path = SUBTASKS_YAML) -> frozenset[str]:
    """Return the `id` of every subtask in the table (cached per path).

    Args:
        path: the subtasks table; defaults to the repository's tool_tables/subtasks.yaml.

    Returns:
        The subtask ids, e.g. frozenset({"object_removal", "text_replacement", ...}).

    Raises:
        TableError: the file is missing, is not YAML, or has no `subtasks` list of rows with a string `id`.
    """
    import yaml  # PyYAML is a core dependency; imported here so `import costa.planner` stays cheap.

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise TableError(f"{path}: cannot read the subtask table: {e}") from e
    rows = data.get("subtasks") if isinstance(data, dict) else None
    if not isinstance(rows, list) or not rows:
        raise TableError(f"{path}: expected a non-empty `subtasks:` list")
    kinds: set[str] = set()
    for i, row in enumerate(rows):
        kind = row.get("id") if isinstance(row, dict) else None
        if not isinstance(kind, str) or not kind:
            raise TableError(f"{path}: subtasks[{i}] has no string `id`: {row!r}")
        kinds.add(kind)
    return frozenset(kinds)
