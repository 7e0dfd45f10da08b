"""The contract every tool class follows.

A tool class says only how to call the tool; what it is (subtasks, typed inputs/outputs, parameters, retry schedule,
requirements) comes from its `ToolSpec` in tool_tables/tools.yaml. Heavy imports and model loading happen in `load()`,
once per instance, never at import time.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from typing import Any

from costa.config import Settings
from costa.errors import ToolUnavailableError
from costa.tools.params import check_params
from costa.types import EditState, Subtask, ToolOutput, ToolSpec


class Tool:
    """Base class: subclasses implement `run` and, when they hold a model, `load`.

    `settings` is set by the services object that owns the tool (limits such as `max_pixels`); a tool built on its own
    reads them from the environment when it first needs them.
    """

    def __init__(self, spec: ToolSpec) -> None:
        self.spec = spec
        self._loaded = False
        self.settings: Settings | None = None

    def current_settings(self) -> Settings:
        """The owning services' settings, else settings read from the environment (kept for later calls)."""
        if self.settings is None:
            self.settings = Settings.from_env()
        return self.settings

    def missing(self) -> str | None:
        """Say why this tool cannot run here (missing module, weights, GPU), or None when it can."""
        absent = [m for m in self.spec.requirements.python if importlib.util.find_spec(m) is None]
        if absent:
            return f"missing Python package(s): {', '.join(absent)}"
        return None

    def ensure_loaded(self) -> None:
        if self._loaded:
            return
        reason = self.missing()
        if reason:
            raise ToolUnavailableError(f"tool {self.spec.id!r} cannot run: {reason}")
        self.load()
        self._loaded = True

    def load(self) -> None:
        """Load models or heavy modules; called once before the first `run`."""

    def __call__(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        """Run the tool with `params` checked against its declaration and the declared defaults filled in; its
        output is made to respect what the user pointed at and the photo's own pixels (`costa.constraints`)."""
        from costa.constraints import constrain_output
        from costa.tables import KindSet

        params = check_params(self.spec.params, params, self.spec.id)
        self.ensure_loaded()
        output = self.run(state, subtask, params)
        return constrain_output(self.spec.id, state, subtask, output, subtask.kind in KindSet("invents"))

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        """Do the work on `state` for `subtask` with the attempt's `params`; raise `ToolError` when it cannot."""
        raise NotImplementedError
