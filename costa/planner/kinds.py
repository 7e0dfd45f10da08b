"""The subtask ids a plan may use, from tool_tables/subtasks.yaml through the one table loader (costa.tables)."""

from __future__ import annotations

import functools
from pathlib import Path

from costa.tables import SUBTASKS_FILE, TABLES_DIR, load_subtasks

#: tool_tables/subtasks.yaml (the one TABLES_DIR of costa.tables).
SUBTASKS_YAML: Path = TABLES_DIR / SUBTASKS_FILE


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
    return frozenset(load_subtasks(path))
