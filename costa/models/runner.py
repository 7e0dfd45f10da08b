"""The seam between the search and the tools: a runner loads and executes one tool call.

`InProcessRunner` (the default) calls the tool in this process. `RayRunner` (`costa.models.ray_runner`, chosen by
COSTA_RUNNER=ray or ray://HOST:PORT) sends the calls of the families tool_tables/deployments.csv serves to Ray Serve
deployments and runs the others here. The search, the tools' table rows and the checks stay unchanged: they only see
`ToolOutput`s and `ToolError`s, and each `tool_finished` event names the runner (`where`) that ran the call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from costa.models.deployments import IN_PROCESS
from costa.tools.base import Tool
from costa.types import EditState, Subtask, ToolOutput, ToolSpec

if TYPE_CHECKING:
    from costa.config import Settings
    from costa.tables import Tables

__all__ = ["IN_PROCESS", "InProcessRunner", "ToolRunner", "make_runner"]


class ToolRunner(Protocol):
    """Loads and runs tool calls; `run` raises `ToolError` (recorded by the search) when the tool fails."""

    def where(self, spec: ToolSpec) -> str:
        """The name of the runner that runs the calls of `spec`'s tool ("in_process", "ray"), for `tool_finished`."""
        ...

    def missing(self, tool: Tool) -> str | None:
        """Why `tool` cannot run through this runner (the tool's own reason, or the runner's), or None."""
        ...

    def load(self, tool: Tool) -> None:
        """Load `tool`'s model where its calls run (once; not part of any call's timed cost)."""
        ...

    def run(self, tool: Tool, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput: ...


class InProcessRunner:
    """Call the tool here, in the calling thread (GPU work is serialised by the app's one tool queue)."""

    def where(self, spec: ToolSpec) -> str:
        return IN_PROCESS

    def missing(self, tool: Tool) -> str | None:
        return tool.missing()

    def load(self, tool: Tool) -> None:
        tool.ensure_loaded()

    def run(self, tool: Tool, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        return tool(state, subtask, params)


def make_runner(settings: Settings, tables: Tables) -> ToolRunner:
    """The runner COSTA_RUNNER names (`settings.runner`); Ray is imported only when it names Ray, on first use.

    Raises:
        TableError: the deployments table is malformed or disagrees with tools.yaml (named, with the line).
    """
    if settings.runner == IN_PROCESS:
        return InProcessRunner()
    from costa.models.deployments import check_families, load_deployments
    from costa.models.ray_runner import RayRunner

    rows = load_deployments(settings.deployments_table)
    check_families(rows, tables.tools, str(settings.deployments_table or "tool_tables/deployments.csv"))
    address = None if settings.runner == "ray" else settings.runner
    return RayRunner(rows, address=address, timeout_seconds=settings.runner_timeout_seconds)
