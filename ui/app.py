"""The first costa page: upload, instruction, α, optional box, result and a live event log.

`build_ui(services)` makes the Blocks; the shared `Services` object is passed in (no module-level state). The handler is
a generator so the log streams while tools run. The full UI (chat, tree, history, evaluator tab) grows from here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gradio as gr
import numpy as np

from costa.errors import CostaError, InputError
from costa.services import Services

EXAMPLES_TEXT = "replace the text 'SALE' with 'OPEN'"


def _format(ev: Any) -> str | None:
    from costa import events as E

    if isinstance(ev, E.PlanReady):
        steps = "; ".join(s.describe() for s in ev.plan.subtasks) or "nothing"
        return f"plan: {steps}"
    if isinstance(ev, E.SubgraphBuilt):
        lines = [f"tool subgraph: {ev.nodes} nodes over {', '.join(ev.tools)}"]
        lines += [f"cannot run {sid}: {why}" for sid, why in ev.unavailable]
        return "\n".join(lines)
    if isinstance(ev, E.ToolStarted):
        return f"… {ev.subtask_id} {ev.tool} (attempt {ev.attempt})"
    if isinstance(ev, E.ToolFinished):
        mark = "pass" if ev.passed else "FAIL"
        return f"   {ev.tool}: {ev.seconds:.2f} s, quality {ev.quality:.2f} {mark} — {'; '.join(ev.reasons)}"
    if isinstance(ev, E.Retry):
        return f"   retry {ev.tool} (attempt {ev.attempt}): {ev.reason}"
    if isinstance(ev, E.ToolFailed):
        return f"   dropped {ev.tool}: {ev.reason}"
    if isinstance(ev, E.PathChosen):
        steps = " → ".join(t for _, t in ev.path)
        return f"chosen path: {steps} ({ev.seconds:.2f} s, quality {ev.quality:.2f}); {ev.executions} tool runs"
    if isinstance(ev, E.SubtaskDone):
        return f"done {ev.subtask_id} {ev.subtask_kind}: quality {ev.quality:.2f} — {ev.result}"
    if isinstance(ev, E.ErrorEvent):
        return f"error: {ev.message}"
    if isinstance(ev, E.TurnDone):
        return f"turn: {ev.seconds:.2f} s, {ev.executions} tool runs, {ev.tool_seconds:.2f} tool-seconds"
    return None


def edit(
    services: Services, image: np.ndarray | None, instruction: str, alpha: float, box: str
) -> Iterator[tuple[np.ndarray | None, str]]:
    """Run one turn; yield (current result, log so far) after each event. Bad input → `gr.Error`, nothing lost."""
    from costa.agent import UserRegion, run_turn
    from costa.events import TurnDone
    from costa.images import parse_box
    from costa.planner import plan_with_rules

    if image is None:
        raise gr.Error("Upload an image first.")
    if not instruction or not instruction.strip():
        raise gr.Error("Type what to change, e.g. " + EXAMPLES_TEXT)
    try:
        h, w = image.shape[:2]
        region = UserRegion(boxes=(parse_box(box, w, h),) if box and box.strip() else ())
        plan = plan_with_rules(instruction)
        log: list[str] = []
        result: np.ndarray | None = None
        for ev in run_turn(services, np.ascontiguousarray(image[..., :3].astype(np.uint8)), plan, alpha, None, region):
            line = _format(ev)
            if line:
                log.append(line)
            if isinstance(ev, TurnDone):
                result = ev.image
            yield result, "\n".join(log)
    except InputError as e:
        raise gr.Error(str(e)) from e
    except CostaError as e:
        raise gr.Error(f"costa could not do this: {e}") from e


def build_ui(services: Services) -> gr.Blocks:
    with gr.Blocks(title="costa") as demo:
        gr.Markdown("# costa\nCost-aware image editing: plan → cheapest good tool path (A*) → checked result.")
        with gr.Row():
            with gr.Column():
                image = gr.Image(label="image", type="numpy", image_mode="RGB")
                instruction = gr.Textbox(label="instruction", placeholder=EXAMPLES_TEXT, submit_btn=False)
                alpha = gr.Slider(0.0, 2.0, value=services.settings.alpha, step=0.1, label="α (0 quality … 2 speed)")
                box = gr.Textbox(label="target box x,y,w,h (optional)", placeholder="e.g. 40,60,200,120")
                run = gr.Button("Edit", variant="primary")
            with gr.Column():
                result = gr.Image(label="result", type="numpy", interactive=False)
                log = gr.Textbox(label="events", lines=18, max_lines=40, interactive=False)

        def handler(img, text, a, b):
            yield from edit(services, img, text, a, b)

        inputs = [image, instruction, alpha, box]
        run.click(handler, inputs, [result, log], api_name="edit")
        instruction.submit(handler, inputs, [result, log], api_name=False)
    return demo
