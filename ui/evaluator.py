"""The evaluator tab: score each subtask of a finished turn full / partial (0.1–0.9) / fail, with a comment.

Task accuracy is the mean of a turn's subtask scores, overall accuracy the mean of the tasks (CoSTA*'s human
evaluation); scores live in the store and export as CSV. With COSTA_AUTH set, the signed-in user is the evaluator.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr

from costa.errors import InputError
from ui.workspace import Workspace

LEVELS = ("full", "partial", "fail")


@dataclass
class Evaluation:
    """The tab's components and how the page refreshes and wires them."""

    turn: gr.Dropdown
    detail: gr.Markdown
    compare: gr.ImageSlider
    subtask: gr.Dropdown
    level: gr.Radio
    partial: gr.Slider
    comment: gr.Textbox
    evaluator: gr.Textbox
    save: gr.Button
    table: gr.Dataframe
    accuracy: gr.Markdown
    export: gr.Button
    csv: gr.File
    ws: Workspace
    ui: gr.State
    owner_of: Callable[[Any], str | None]
    short_errors: Callable[..., Any]

    @property
    def outputs(self) -> list[Any]:
        return [self.turn, self.detail, self.compare, self.subtask, self.table, self.accuracy, self.csv]

    def refresh(self, state: Any) -> dict[Any, Any]:
        """Turn choices, the scores table and the accuracies for the session in `state`."""
        turns = [t for t in self.ws.store.turns(state.session_id) if t.plan and t.plan.get("subtasks")]
        choices = [(f"turn {t.id}: {t.instruction[:60]} ({t.status})", t.id) for t in turns if t.status != "running"]
        acc = self.ws.accuracy(state.session_id, state.owner)
        return {
            self.turn: gr.update(choices=choices),
            self.table: _rows(acc),
            self.accuracy: _accuracy_md(acc),
        }

    def wire(self, everything: list[Any]) -> None:
        ws = self.ws
        private: dict[str, Any] = {"api_visibility": "private"}

        @self.short_errors
        def on_turn(state: Any, turn_id: Any) -> dict[Any, Any]:
            if turn_id in (None, ""):
                return {self.detail: "_Pick a turn._", self.subtask: gr.update(choices=[], value=None)}
            turn = ws.store.turn(state.session_id, int(turn_id))
            subtasks = (turn.plan or {}).get("subtasks", [])
            view = ws.view_of(turn)
            lines = [f"**turn {turn.id}** · {turn.status} · “{turn.instruction}”"]
            for s in subtasks:
                done = view.done_subtasks.get(s["id"])
                got = (
                    f"via {' → '.join(done.tools)}, quality {done.quality:.2f}" if done else view.subtask_state(s["id"])
                )
                result = f" — {done.result}" if done and done.result else ""
                if s["id"] in view.unverified:  # found but not verified: say what was missing
                    result += " — target not verified: " + "; ".join(view.unverified[s["id"]].missing)
                lines.append(f"- **{s['id']}** {ws.names.get(s['kind'], s['kind'])}: {got}{result}")
            images = None
            if turn.base_version is not None:
                before = ws.store.load_image(ws.store.version(state.session_id, turn.base_version))
                after = (
                    ws.store.load_image(ws.store.version(state.session_id, turn.result_version))
                    if turn.result_version is not None
                    else before
                )
                images = (before, after) if before.shape == after.shape else (after, after)
            choices = [(f"{s['id']} · {ws.names.get(s['kind'], s['kind'])}", s["id"]) for s in subtasks]
            return {
                self.detail: "\n".join(lines),
                self.compare: images,
                self.subtask: gr.update(choices=choices, value=choices[0][1] if choices else None),
            }

        @self.short_errors
        def on_save(
            state: Any, turn_id: Any, subtask_id: Any, level: str, partial: float, comment: str, who: str
        ) -> dict[Any, Any]:
            if turn_id in (None, ""):
                raise InputError("pick a turn to score")
            if not subtask_id:
                raise InputError("pick a subtask to score")
            if level not in LEVELS:
                raise InputError("choose full, partial or fail")
            value = {"full": 1.0, "fail": 0.0}.get(level, round(float(partial), 1))
            acc = ws.score(state.session_id, state.owner, int(turn_id), subtask_id, value, comment or "", who or "")
            gr.Info(f"Saved: turn {turn_id} {subtask_id} = {value:g}")
            return {self.table: _rows(acc), self.accuracy: _accuracy_md(acc)}

        @self.short_errors
        def on_export(state: Any) -> dict[Any, Any]:
            return {self.csv: str(ws.scores_csv(state.session_id, state.owner))}

        self.turn.input(on_turn, [self.ui, self.turn], everything, **private)
        inputs = [self.ui, self.turn, self.subtask, self.level, self.partial, self.comment, self.evaluator]
        self.save.click(on_save, inputs, everything, **private)
        self.export.click(on_export, [self.ui], everything, **private)
        self.level.change(lambda lv: gr.update(interactive=lv == "partial"), [self.level], [self.partial], **private)


def _rows(acc: dict[str, Any]) -> list[list[Any]]:
    return [[s["turn_id"], s["subtask_id"], s["score"], s["comment"], s["evaluator"]] for s in acc["scores"]]


def _accuracy_md(acc: dict[str, Any]) -> str:
    if acc["overall"] is None:
        return "_No scores yet._"
    tasks = " · ".join(f"turn {k}: {v:.2f}" for k, v in acc["tasks"].items())
    return f"**Overall accuracy {acc['overall']:.3f}** over {len(acc['tasks'])} task(s) · {tasks}"


def build_evaluator(
    ws: Workspace, ui: gr.State, owner_of: Callable[[Any], str | None], short_errors: Callable[..., Any]
) -> Evaluation:
    """Lay out the tab (inside the page's Tabs) and return its `Evaluation` for refreshing and wiring."""
    with gr.Tab("Evaluate", id="evaluate"):
        gr.Markdown(
            "Score each subtask of a finished turn: **full** (1), **partial** (0.1–0.9) or **fail** (0). "
            "Task accuracy = mean of its subtasks; overall accuracy = mean of the tasks."
        )
        with gr.Row(equal_height=False):
            with gr.Column(scale=5):
                turn = gr.Dropdown(label="Turn", choices=[], interactive=True, elem_id="eval-turn")
                detail = gr.Markdown("_Pick a turn._")
                compare = gr.ImageSlider(label="Before / after this turn", type="numpy", format="png")
            with gr.Column(scale=5):
                subtask = gr.Dropdown(label="Subtask", choices=[], interactive=True, elem_id="eval-subtask")
                level = gr.Radio(list(LEVELS), value="full", label="Score")
                partial = gr.Slider(0.1, 0.9, value=0.5, step=0.1, label="Partial credit", interactive=False)
                comment = gr.Textbox(label="Comment", lines=2)
                evaluator = gr.Textbox(label="Evaluator (your name; the signed-in user when login is on)")
                save = gr.Button("Save score", variant="primary", elem_id="save-score")
                accuracy = gr.Markdown("_No scores yet._", elem_id="accuracy")
                table = gr.Dataframe(
                    headers=["turn", "subtask", "score", "comment", "evaluator"],
                    value=[],
                    interactive=False,
                    wrap=True,
                )
                with gr.Row():
                    export = gr.Button("Export scores (CSV)")
                    csv = gr.File(label="Scores CSV", interactive=False)
    return Evaluation(
        turn,
        detail,
        compare,
        subtask,
        level,
        partial,
        comment,
        evaluator,
        save,
        table,
        accuracy,
        export,
        csv,
        ws,
        ui,
        owner_of,
        short_errors,
    )
