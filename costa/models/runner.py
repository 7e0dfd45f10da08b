"""The seam between the search and the tools: a runner executes one tool call.

`InProcessRunner` (the default) calls the tool in this process. A remote runner (e.g. GPU tools served as Ray Serve
deployments or behind a model server on other machines) would implement the same `run` and be passed to `Services`:
the search, the tools' table rows and the checks stay unchanged, since they only see `ToolOutput`s and `ToolError`s.
Not built yet; see the README's "Scaling out" section.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from costa.tools.base import Tool
from costa.types import EditState, Subtask, ToolOutput


class ToolRunner(Protocol):
    """Runs one tool call and returns its output; raises `ToolError` (recorded by the search) when the tool fails."""

    def run(self, tool: Tool, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput: ...


class InProcessRunner:
    """Call the tool here, in the calling thread (GPU work is serialised by the app's one tool queue)."""

    def run(self, tool: Tool, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        return tool(state, subtask, params)
