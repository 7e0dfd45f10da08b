"""A seeded synthetic tool table of any size, for measuring how the graph build and the search scale.

The real subtasks are kept; the tools are drawn from the real tools' typed signatures (detector image → boxes,
segmenter image + boxes → masks, editor image + masks → image, text detector, text editor, whole-image tool…), each
signature weighted by how many real tools share it, so a 500-tool table has the same mix of one-step tools and
multi-step chains as the real one, twelve times over. Each synthetic tool serves one to three of the subtasks the real
tools of its signature serve, with a seeded benchmark row (seconds log-uniform in [0.005, 15], quality uniform in
[0.6, 1.0]) and a retry schedule of zero to two retries. The documents go through `parse_tables`, so the result is
validated exactly like the real tables.

Example:
    >>> from costa.tables import load_tables
    >>> t = make_synthetic_tables(load_tables(), n_tools=60, seed=0)
    >>> len(t.tools), set(t.subtasks) == set(load_tables().subtasks)
    (60, True)
"""

from __future__ import annotations

import io
import math
import random
from collections import Counter
from collections.abc import Mapping
from typing import Any

from costa.errors import ToolError
from costa.tables import BENCHMARK_COLUMNS, Tables, parse_tables
from costa.tools.base import Tool
from costa.types import EditState, Subtask, ToolOutput

SECONDS_RANGE = (0.005, 15.0)  # seconds, log-uniform
QUALITY_RANGE = (0.6, 1.0)
MAX_SUBTASKS_PER_TOOL = 3
MAX_RETRIES = 2

Signature = tuple[tuple[str, ...], tuple[str, ...]]  # (inputs, outputs)


class SimulatedTool(Tool):
    """The class every synthetic tool names: its outcomes are drawn by the search benchmark, so it never runs."""

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        raise ToolError(f"{self.spec.id} is a simulated tool of a synthetic table; it cannot run on images")


def tool_signatures(tables: Tables) -> dict[Signature, tuple[int, tuple[str, ...]]]:
    """Return, per typed signature of the real tools, (how many real tools have it, the subtasks they serve)."""
    counts: Counter[Signature] = Counter()
    serves: dict[Signature, set[str]] = {}
    for t in tables.tools.values():
        sig = (t.inputs, t.outputs)
        counts[sig] += 1
        serves.setdefault(sig, set()).update(t.subtasks)
    return {sig: (counts[sig], tuple(sorted(serves[sig]))) for sig in sorted(counts)}


def make_synthetic_tables(base: Tables, n_tools: int = 500, seed: int = 0) -> Tables:
    """Return validated `Tables` with `base`'s subtasks and `n_tools` seeded synthetic tools.

    Args:
        base: the real tables; their subtasks are kept and their tools' signatures are sampled.
        n_tools: how many tools to make (≥ the number of subtasks, so every subtask gets one).
        seed: makes the table deterministic.

    Raises:
        ValueError: `n_tools` is too small to give every subtask a tool.
    """
    if n_tools < len(base.subtasks):
        raise ValueError(f"n_tools must be >= {len(base.subtasks)} (one per subtask), got {n_tools}")
    rng = random.Random(seed)
    signatures = tool_signatures(base)
    sigs = list(signatures)
    weights = [signatures[s][0] for s in sigs]
    by_kind = {k: [s for s in sigs if k in signatures[s][1]] for k in base.subtasks}

    tools: list[dict[str, Any]] = []
    rows: list[tuple[str, str, float, float]] = []

    def add(sig: Signature, kinds: list[str]) -> None:
        tid = f"syn{len(tools):04d}"
        retries = rng.randint(0, MAX_RETRIES)
        params = (
            {
                "strength": {
                    "type": "int",
                    "min": 0,
                    "max": MAX_RETRIES,
                    "default": 0,
                    "retries": list(range(1, retries + 1)),
                }
            }
            if retries
            else {}
        )
        tools.append(
            {
                "id": tid,
                "family": "synthetic",
                "backend": rng.choice(("embedded", "neural", "api")),
                "status": "ready",
                "class": "costa.synthetic.tool_tables:SimulatedTool",
                "subtasks": kinds,
                "inputs": list(sig[0]),
                "outputs": list(sig[1]),
                "params": params,
            }
        )
        lo, hi = (math.log(x) for x in SECONDS_RANGE)
        for k in kinds:
            rows.append((tid, k, math.exp(rng.uniform(lo, hi)), rng.uniform(*QUALITY_RANGE)))

    # One tool per subtask first (with a signature that can finish it alone when one exists), so none is left bare.
    for kind, spec in base.subtasks.items():
        finishing = [s for s in by_kind[kind] if spec.produces in s[1] and set(s[0]) <= {"image"}]
        add(rng.choice(finishing or by_kind[kind]), [kind])
    while len(tools) < n_tools:
        sig = rng.choices(sigs, weights)[0]
        eligible = signatures[sig][1]
        kinds = rng.sample(eligible, rng.randint(1, min(MAX_SUBTASKS_PER_TOOL, len(eligible))))
        add(sig, sorted(kinds))

    subtasks_doc = {
        "subtasks": [
            {"id": s.id, "name": s.name, "produces": s.produces, "edits_image": s.edits_image}
            for s in base.subtasks.values()
        ]
    }
    csv_text = io.StringIO()
    csv_text.write(",".join(BENCHMARK_COLUMNS) + "\n")
    for tid, kind, seconds, quality in rows:
        csv_text.write(f"{tid},{kind},{seconds:.6g},{quality:.4f},,estimate,0\n")
    names = ("synthetic/subtasks.yaml", "synthetic/tools.yaml", "synthetic/benchmark.csv")
    return parse_tables(subtasks_doc, {"tools": tools}, csv_text.getvalue(), names)
