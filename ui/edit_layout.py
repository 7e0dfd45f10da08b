"""The Edit tab's layout: its components (`EditTab`) and where they sit (`build_edit`); `ui.edit` wires their events."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from costa.session import MODES
from ui import progress as P
from ui import proposal_view as PV
from ui import render as R
from ui import targets_view as TV
from ui.overlays import points_text
from ui.reflection_panel import build_reflection_panel
from ui.state import ASSETS, EXAMPLE_TEXT, EXAMPLES


@dataclass
class EditTab:
    """The Edit tab's components (see `build_edit`)."""

    image: gr.Image
    points: gr.Markdown
    clear_points: gr.Button
    box: gr.Textbox
    brush_panel: gr.Accordion
    brush_editor: gr.ImageEditor
    use_brush: gr.Button
    clear_brush: gr.Button
    examples: gr.Dataset
    export: gr.Button
    downloads: gr.File
    chat: gr.Chatbot
    instruction: gr.Textbox
    send: gr.Button
    stop: gr.Button
    alpha: gr.Slider
    threshold: gr.Slider
    mode: gr.Radio
    prediction: gr.Markdown
    tree: gr.Markdown
    graph: gr.Markdown
    slider: gr.ImageSlider
    undo: gr.Button
    redo: gr.Button
    ledger: gr.Markdown
    target_row: gr.Row  # the actions on an unverified target (ui.targets_view), hidden until a turn leaves one
    edit_region: gr.Button
    let_me_point: gr.Button
    do_rest: gr.Button
    reflect: gr.Checkbox  # multi-expert reflection on/off for the next turn (ui.reflection_panel)
    reflection: gr.Markdown
    progress: gr.HTML  # the stepped tool's progress bar (ui.progress), shown only while such a call runs
    proposal_row: gr.Row  # a pending proposal's note, Accept and Discard (ui.proposal_view), hidden otherwise
    proposal_note: gr.Markdown
    accept: gr.Button
    discard: gr.Button
    refine: gr.Button  # run the proposal's instruction again with the pointing added since (ui.proposal_view)

    @property
    def outputs(self) -> list[Any]:
        return [
            self.image, self.points, self.box, self.brush_editor, self.downloads, self.chat, self.instruction,
            self.prediction, self.tree, self.graph, self.slider, self.undo, self.redo, self.ledger, self.target_row,
            self.reflection, self.progress, self.brush_panel, self.proposal_row, self.proposal_note,
        ]  # fmt: skip


def build_edit(settings: Any) -> EditTab:
    """Lay out the Edit tab (inside the page's Tabs)."""
    with gr.Tab("Edit", id="edit"):
        with gr.Row(equal_height=False):
            with gr.Column(scale=5, min_width=340):
                image = gr.Image(
                    label="Current image — upload one, then click on it to point at a target",
                    type="numpy", image_mode="RGB", sources=["upload", "clipboard"], format="png", height=360,
                    elem_id="current-image",
                )  # fmt: skip
                with gr.Row():
                    points = gr.Markdown(points_text([]), elem_id="points")
                    clear_points = gr.Button("Clear points", size="sm", scale=0, min_width=110)
                box = gr.Textbox(label="Target box x,y,w,h (optional)", placeholder="e.g. 40,60,200,120", max_lines=1)
                with gr.Row():
                    export = gr.Button("⬇ Download image + bundle", size="sm", elem_id="export")
                downloads = gr.File(
                    label="Downloads", file_count="multiple", interactive=False, visible=False, elem_id="downloads"
                )
                with gr.Accordion(
                    "🖌 Brush a mask — paint exactly what to edit", open=False, elem_id="brush-panel"
                ) as brush_panel:
                    brush_editor = gr.ImageEditor(
                        label="Paint over the target, then press Use brush mask",
                        type="numpy", image_mode="RGBA", sources=[], transforms=[], layers=False,
                        brush=gr.Brush(colors=["#ff008c"], color_mode="fixed"), eraser=gr.Eraser(), format="png",
                        height=360, elem_id="brush-editor",
                    )  # fmt: skip
                    with gr.Row():
                        use_brush = gr.Button("Use brush mask", size="sm", elem_id="use-brush")
                        clear_brush = gr.Button("Clear brush", size="sm", elem_id="clear-brush")
                examples = gr.Dataset(
                    label="Examples — one click loads image and instruction (in a new session)",
                    components=["image", "textbox", "textbox"],
                    headers=["image", "instruction", "box"],
                    samples=[[str(ASSETS / f), text, b] for f, text, b in EXAMPLES if (ASSETS / f).exists()],
                    type="index",
                    elem_id="examples",
                )
            with gr.Column(scale=6, min_width=420):
                chat = gr.Chatbot(
                    label="Chat", height=470, elem_id="chat", buttons=["copy_all"], feedback_options=None,
                    placeholder="Upload an image (or pick an example), type an instruction, press Enter.",
                )  # fmt: skip
                with gr.Row():
                    instruction = gr.Textbox(
                        show_label=False, placeholder=f"What should change? e.g. {EXAMPLE_TEXT} — Enter sends",
                        max_lines=3, scale=6, elem_id="instruction",
                    )  # fmt: skip
                    send = gr.Button("Send", variant="primary", scale=1, min_width=80, elem_id="send")
                    stop = gr.Button("Stop", variant="stop", scale=1, min_width=80, elem_id="stop")
                progress = P.build_progress()
                target_row, edit_region, let_me_point, do_rest = TV.action_row()  # unverified targets
                proposal = PV.action_row()  # a result costa cannot vouch for: Accept / Discard / Refine
                with gr.Row():
                    alpha = gr.Slider(
                        0.0, 2.0, value=settings.alpha, step=0.1, label="α: 0 = best quality … 2 = fastest",
                        elem_id="alpha",
                    )  # fmt: skip
                    threshold = gr.Slider(
                        0.0, 1.0, value=settings.threshold, step=0.05, label="Quality threshold per step",
                        elem_id="threshold",
                    )  # fmt: skip
                mode = gr.Radio(
                    [(label, key) for key, label in MODES.items()], value="lazy", label="Search mode", elem_id="mode",
                    info="FaSTA* fast–slow runs a learned subroutine first; the chat says which rule served each "
                    "subtask, or why the local A* did.",
                )  # fmt: skip
                reflection = build_reflection_panel(settings.reflect)
                prediction = gr.Markdown(R.prediction_markdown(settings.alpha, []), elem_id="prediction")
        gr.Markdown("### Live view: plan and tool search")
        with gr.Row(equal_height=False):
            with gr.Column(scale=4):
                tree = gr.Markdown(R.tree_markdown(None), elem_id="tree", label="Subtask tree")
            with gr.Column(scale=7):
                graph = gr.Markdown(R.graph_markdown(None), elem_id="toolgraph", label="Tool subgraph")
        with gr.Row(equal_height=False):
            with gr.Column(scale=5):
                slider = gr.ImageSlider(
                    label="◀ Before (left) · After (right) ▶ — drag the handle",
                    type="numpy", format="png", elem_id="slider",
                )  # fmt: skip
                with gr.Row():
                    undo = gr.Button("↩ Undo", elem_id="undo")
                    redo = gr.Button("↪ Redo", elem_id="redo")
            with gr.Column(scale=6):
                gr.Markdown("### Cost ledger")
                ledger = gr.Markdown(R.ledger_markdown(None), elem_id="ledger")
    return EditTab(
        image, points, clear_points, box, brush_panel, brush_editor, use_brush, clear_brush, examples, export,
        downloads, chat, instruction, send, stop, alpha, threshold, mode, prediction, tree, graph, slider, undo,
        redo, ledger, target_row=target_row, edit_region=edit_region, let_me_point=let_me_point, do_rest=do_rest,
        reflect=reflection.switch, reflection=reflection.markdown, progress=progress, proposal_row=proposal[0],
        proposal_note=proposal[1], accept=proposal[2], discard=proposal[3], refine=proposal[4],
    )  # fmt: skip
