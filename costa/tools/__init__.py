"""Tools, one module per family. tools.yaml names each ready tool's class; `tool_class` imports it on demand so
`import costa` stays light (no tool module, and no heavy backend, is imported until a tool is first used)."""

from __future__ import annotations

import importlib

from costa.errors import TableError
from costa.types import ToolSpec


def tool_class(spec: ToolSpec) -> type:
    """Import and return the class tools.yaml names for `spec` ("package.module:Class").

    Raises:
        TableError: the tool names no class (a planned tool), or the class does not exist in its module.
    """
    if spec.impl is None:
        raise TableError(f"tool {spec.id!r} names no class in tool_tables/tools.yaml (status {spec.status})")
    module, _, name = spec.impl.partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except AttributeError as e:
        raise TableError(f"tool {spec.id!r}: module {module!r} has no class {name!r} (tools.yaml 'class')") from e
