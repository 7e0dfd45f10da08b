"""The contract every tool class follows.

A tool class says only how to call the tool; what it is (subtasks, typed inputs/outputs, parameters, retry schedule,
requirements) comes from its `ToolSpec` in tool_tables/tools.yaml. Heavy imports and model loading happen in `load()`,
once per instance, never at import time.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar

from costa.config import Settings
from costa.errors import CostaError, ToolUnavailableError
from costa.tools.params import check_params
from costa.types import EditState, Subtask, ToolCall, ToolOutput, ToolSpec


class Tool:
    """Base class: subclasses implement `run` and, when they hold a model, `load`; a model that takes several inputs
    in one pass may also implement `run_batch` and set `batches` (the Ray runner then batches concurrent calls).

    `settings` is set by the services object that owns the tool (limits such as `max_pixels`); a tool built on its own
    reads them from the environment when it first needs them.
    """

    #: Whether `run_batch` runs several calls in one pass of the model (not one after another): only then does a
    #: served family's replica gather concurrent calls into batches (`costa.models.replica`).
    batches: ClassVar[bool] = False

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

    def call_batch(self, calls: Sequence[ToolCall]) -> list[ToolOutput | CostaError]:
        """Several calls at once, each checked and constrained as `__call__` does, in order: a call whose parameters
        are refused, or that the tool refuses, gets its error and the others their outputs. A failure of the whole
        pass (our bug, an out-of-memory) raises.
        """
        from costa.constraints import constrain_output
        from costa.tables import KindSet

        results: list[ToolOutput | CostaError | None] = [None] * len(calls)
        ready: list[tuple[int, ToolCall]] = []
        for i, call in enumerate(calls):
            try:
                ready.append((i, replace(call, params=check_params(self.spec.params, call.params, self.spec.id))))
            except CostaError as e:
                results[i] = e
        if ready:
            self.ensure_loaded()
            outputs = self.run_batch([call for _, call in ready])
            for (i, call), out in zip(ready, outputs, strict=True):
                if isinstance(out, CostaError):
                    results[i] = out
                    continue
                try:
                    invents = call.subtask.kind in KindSet("invents")
                    results[i] = constrain_output(self.spec.id, call.state, call.subtask, out, invents)
                except CostaError as e:
                    results[i] = e
        done = [r for r in results if r is not None]
        assert len(done) == len(calls)  # every call got its output or its error above
        return done

    def run_batch(self, calls: Sequence[ToolCall]) -> list[ToolOutput | CostaError]:
        """`run` for each call (parameters already checked); a model that batches overrides this with one pass and
        sets `batches`. A call the tool refuses gets its `ToolError` in its place."""
        out: list[ToolOutput | CostaError] = []
        for call in calls:
            try:
                out.append(self.run(call.state, call.subtask, call.params))
            except CostaError as e:
                out.append(e)
        return out
