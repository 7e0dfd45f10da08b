"""The page's reflection pieces: the on/off switch, the per-subtask panel (experts × dimensions, S, decision,
attempts, the kept attempt) and the α preview's expected reflection cost. `ui/app.py` only places and wires them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import gradio as gr

from costa.reflect.report import panel_markdown
from costa.reflect.session import expected_reflection_seconds, load_protocol, vlm_expert_count

__all__ = [
    "ReflectionPanel",
    "build_reflection_panel",
    "cost_note",
    "panel_update",
    "reflection_events",
    "vlm_expert_count",
]

KINDS = frozenset({"reflection", "reflection_retry", "reflection_kept", "expert_dropped"})


@dataclass
class ReflectionPanel:
    switch: gr.Checkbox
    markdown: gr.Markdown


def build_reflection_panel(default_on: bool) -> ReflectionPanel:
    """The switch (place it with the other turn settings) and the panel (an accordion below the live view)."""
    switch = gr.Checkbox(
        value=default_on,
        label="Reflect: experts judge each finished subtask and retry on their feedback (off for demos/comparisons)",
        elem_id="reflect",
    )
    with gr.Accordion("Reflection (multi-expert check per subtask)", open=False):
        markdown = gr.Markdown(panel_markdown(()), elem_id="reflection")
    return ReflectionPanel(switch, markdown)


def reflection_events(events: Iterable[Any]) -> list[Any]:
    return [e for e in events if e is not None and getattr(e, "kind", "") in KINDS]


def panel_update(events: Iterable[Any], on: bool = True) -> str:
    if not on:
        return "_Reflection is switched off for this turn._"
    return panel_markdown(reflection_events(events))


def cost_note(predictions: Sequence[tuple[float, Sequence[tuple[str, str]], float, float]], alpha: float,
              n_vlm: int, on: bool = True) -> str:  # fmt: skip
    """One line for the α preview: the reflection seconds expected on top of the predicted path at this α."""
    if not on or not predictions:
        return ""
    current = min(predictions, key=lambda p: abs(p[0] - alpha))
    subtasks = len({sid for sid, _ in current[1]})
    extra = expected_reflection_seconds(current[2], subtasks, n_vlm, load_protocol())
    who = f"offline experts + {n_vlm} VLM expert(s)" if n_vlm else "offline experts"
    return f"\n\n_Reflection ({who}) is expected to add about {extra:.2f} s ({current[2] + extra:.2f} s in all)._"
