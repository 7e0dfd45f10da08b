"""Shared, long-lived objects: settings, tables, tool instances, the OCR engine, and learned estimates.

One `Services` object is built per process (by app.py or the CLI) and passed to whatever needs it; nothing here is a
module-level global. Tool instances are created on first use and keep their loaded models.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from costa.config import Settings
from costa.models.cache import ModelCache
from costa.models.runner import ToolRunner, make_runner
from costa.tables import Tables, load_tables
from costa.tools import tool_class
from costa.tools.base import Tool
from costa.types import ToolSpec

log = logging.getLogger(__name__)

#: How many observations the table's row is worth when blending with measured runs.
PRIOR_WEIGHT = 3.0


@dataclass
class Estimates:
    """Expected (seconds, quality) per (tool, subtask kind): the benchmark table blended with observed runs.

    Observed runs pull the estimate toward what this machine actually does, so later searches start better informed.
    Thread-safe: app users share it.
    """

    tables: Tables
    _obs: dict[tuple[str, str], tuple[int, float, float]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, tool: str, kind: str) -> tuple[float, float]:
        row = self.tables.benchmark[(tool, kind)]
        with self._lock:
            n, s_sum, q_sum = self._obs.get((tool, kind), (0, 0.0, 0.0))
        w = max(PRIOR_WEIGHT, float(row.n)) if row.measured else PRIOR_WEIGHT
        seconds = (w * row.seconds + s_sum) / (w + n)
        quality = (w * row.quality + q_sum) / (w + n)
        return max(seconds, 1e-6), min(max(quality, 0.0), 1.0)

    def observe(self, tool: str, kind: str, seconds: float, quality: float) -> None:
        with self._lock:
            n, s_sum, q_sum = self._obs.get((tool, kind), (0, 0.0, 0.0))
            self._obs[(tool, kind)] = (n + 1, s_sum + seconds, q_sum + quality)

    def relabel(self, tool: str, kind: str, was: float, now: float) -> bool:
        """Replace the quality `was` of one run these estimates observed by `now` (a person's verdict on its result:
        1.0 accepted, 0.0 discarded), keeping the run count — the run is counted once. False, and nothing changes,
        when they never observed (tool, kind) (another process ran it)."""
        with self._lock:
            n, s_sum, q_sum = self._obs.get((tool, kind), (0, 0.0, 0.0))
            if n == 0:
                return False
            self._obs[(tool, kind)] = (n, s_sum, min(max(q_sum + float(now) - float(was), 0.0), float(n)))
            return True

    def observed(self) -> dict[tuple[str, str], int]:
        with self._lock:
            return {k: v[0] for k, v in self._obs.items()}


def _switched_off(tables: Tables, tool_ids: tuple[str, ...]) -> Tables:
    """`tables` with each of `tool_ids` planned (COSTA_TOOLS_OFF), so the search never runs it.

    Raises:
        InputError: an id no tool has (named, with the setting).
    """
    if not tool_ids:
        return tables
    from dataclasses import replace
    from types import MappingProxyType

    from costa.errors import InputError

    unknown = [t for t in tool_ids if t not in tables.tools]
    if unknown:
        raise InputError(
            f"COSTA_TOOLS_OFF names unknown tool(s) {', '.join(unknown)}; `python -m costa doctor` lists every tool id"
        )
    tools = dict(tables.tools)
    for t in tool_ids:
        tools[t] = replace(tools[t], status="planned", planned_reason="switched off by COSTA_TOOLS_OFF")
    return replace(tables, tools=MappingProxyType(tools))


class Services:
    """Settings, tables, tools and estimates shared by every turn in this process."""

    def __init__(self, settings: Settings | None = None, tables: Tables | None = None) -> None:
        self.settings = settings or Settings.from_env()
        self.tables = _switched_off(tables or load_tables(), self.settings.tools_off)
        self.estimates = Estimates(self.tables)
        self._tools: dict[str, Tool] = {}
        budget = self.settings.model_memory_gb
        #: Loaded neural models shared by every tool (one Grounding DINO, one inpainting pipeline), LRU over budget.
        self.models = ModelCache(int(budget * 2**30) if budget else None)
        #: Runs each tool call: in process by default, on Ray Serve with COSTA_RUNNER=ray (README, "Scaling out").
        self.runner: ToolRunner = make_runner(self.settings, self.tables)
        self._reader: Any = None
        self._calibration: Any = None
        self._lock = threading.RLock()

    @property
    def reader(self) -> Any:
        """The OCR engine shared by the OCR tools and the text checks (loaded on first use)."""
        with self._lock:
            if self._reader is None:
                from costa.tools.ocr import RapidOcrReader

                self._reader = RapidOcrReader()
            return self._reader

    @property
    def calibration(self) -> Any:
        """The real-photo calibration (`costa.calibration.Calibration`) of COSTA_CALIBRATION_TABLE, else the shipped
        `tool_tables/calibration.csv`; read on first use. Raises `TableError` naming a missing or malformed file."""
        with self._lock:
            if self._calibration is None:
                from costa.calibration import load_calibration

                self._calibration = load_calibration(self.settings.calibration_table)
            return self._calibration

    def tool(self, tool_id: str) -> Tool:
        """The tool instance for `tool_id`, created once."""
        return self.tool_for(self.tables.tools[tool_id])

    def tool_for(self, spec: ToolSpec) -> Tool:
        """The tool instance for `spec`, created once (again when another spec of the same id comes: a Serve replica
        builds the tools its callers' tables describe)."""
        tool_id = spec.id
        with self._lock:
            if tool_id not in self._tools or self._tools[tool_id].spec != spec:
                cls = tool_class(spec)
                tool = cls(spec, reader=self.reader) if spec.family == "ocr" else cls(spec)
                tool.settings = self.settings  # limits such as max_pixels come from this process's settings
                if hasattr(tool, "models"):  # neural tools share this process's model cache
                    tool.models = self.models
                self._tools[tool_id] = tool
            return self._tools[tool_id]

    def why_not(self, tool_id: str) -> str | None:
        """Why `tool_id` cannot run here (status, missing package/weights/GPU), or None when it can."""
        spec: ToolSpec = self.tables.tools[tool_id]
        if spec.status != "ready" or spec.impl is None:
            return self._planned_reason(spec)
        try:
            return self.runner.missing(self.tool(tool_id))
        except ImportError as e:  # a tool module whose own import fails is reported, not fatal to the app
            return f"cannot import its module: {e}"

    def _planned_reason(self, spec: ToolSpec) -> str:
        """What a planned tool would need, with what of it this machine already has (nothing is imported)."""
        import importlib.util

        def have(module: str) -> str:
            try:
                return "installed" if importlib.util.find_spec(module) is not None else "missing"
            except (ImportError, ValueError):
                return "missing"

        need = []
        if spec.requirements.python:
            need.append("Python " + ", ".join(f"{m} ({have(m)})" for m in spec.requirements.python))
        if spec.requirements.weights:
            need.append(
                "weights " + ", ".join(spec.requirements.weights) + " (in COSTA_MODELS_DIR or the Hugging Face cache)"
            )
        if spec.requirements.gpu:
            need.append("a CUDA GPU")
        if spec.backend == "api":
            endpoint = "set" if self.settings.openai_base_url or self.settings.openai_api_key else "not set"
            need.append(f"an OpenAI-compatible endpoint (OPENAI_BASE_URL / OPENAI_API_KEY: {endpoint})")
        what = {"neural": "a local neural model", "api": "a vision/language model behind an API"}.get(
            spec.backend, "code"
        )
        why = spec.planned_reason or f"not implemented in costa yet ({what})"
        return f"planned: {why}; would need " + ("; ".join(need) or "an implementation")

    def is_ready(self, tool_id: str) -> bool:
        return self.why_not(tool_id) is None

    def readiness(self) -> dict[str, str | None]:
        return {tid: self.why_not(tid) for tid in self.tables.tools}

    def is_ready_fn(self) -> Callable[[str], bool]:
        cache: dict[str, bool] = {}

        def ready(tid: str) -> bool:
            if tid not in cache:
                cache[tid] = self.is_ready(tid)
            return cache[tid]

        return ready
