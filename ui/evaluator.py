"""The evaluator tab: score each subtask of a finished turn full / partial (0.1–0.9) / fail, with a comment.

Task accuracy is the mean of a turn's subtask scores, overall accuracy the mean of the tasks (CoSTA*'s human
evaluation); scores live in the store and export as CSV. With COSTA_AUTH set, the signed-in user is the evaluator.
Below the scores, every proposal of the session (a result costa could not vouch for) with the person's verdict —
accepted, discarded, refined, or still pending / superseded — who gave it and when; the CSV export holds them too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from costa.bundle import iso_time
from costa.errors import InputError
from ui.state import Page, page_errors

LEVELS = ("full", "partial", "fail")


@dataclass
class Evaluation:
    """The tab's components and how the page refreshes and wires them."""

    tab: gr.Tab
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
    verdicts: gr.Dataframe

    @property
    def outputs(self) -> list[Any]:
        return [self.turn, self.detail, self.compare, self.subtask, self.table, self.accuracy, self.csv, self.verdicts]

    def wire(self, page: Page, everything: list[Any]) -> None:
        """Register the tab's refresher and connect its events (after every tab is built)."""
        core, ui = page.core, page.ui
        private: dict[str, Any] = {"api_visibility": "private"}

        def refresh(state: Any) -> dict[Any, Any]:
            acc = core.versions.accuracy(state.session_id, state.owner)
            return {
                self.turn: gr.update(choices=core.versions.turn_choices(state.session_id, state.owner), value=None),
                self.table: _rows(acc),
                self.accuracy: _accuracy_md(acc),
                self.verdicts: verdict_rows(core.proposals.rows(state.session_id, state.owner)),
            }

        page.add(self.outputs, refresh)

        @page_errors
        def on_turn(state: Any, turn_id: Any) -> dict[Any, Any]:
            if turn_id in (None, ""):
                return {self.detail: "_Pick a turn._", self.subtask: gr.update(choices=[], value=None)}
            d = core.versions.turn_detail(state.session_id, state.owner, turn_id)
            lines = [f"**turn {d.number}** · {d.turn.status} · “{d.turn.instruction}”"]
            for sid, name in d.subtasks:
                done = d.view.done_subtasks.get(sid)
                got = f"via {' → '.join(done.tools)}, quality {done.quality:.2f}" if done else d.view.subtask_state(sid)
                result = f" — {done.result}" if done and done.result else ""
                if sid in d.view.unverified:  # found but not verified: say what was missing
                    result += " — target not verified: " + "; ".join(d.view.unverified[sid].missing)
                lines.append(f"- **{sid}** {name}: {got}{result}")
            choices = [(f"{sid} · {name}", sid) for sid, name in d.subtasks]
            return {
                self.detail: "\n".join(lines),
                self.compare: d.images,
                self.subtask: gr.update(choices=choices, value=choices[0][1] if choices else None),
            }

        @page_errors
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
            acc = core.versions.score(
                state.session_id, state.owner, turn_id, subtask_id, value, comment or "", who or ""
            )
            gr.Info(f"Saved: {subtask_id} = {value:g}")
            return {self.table: _rows(acc), self.accuracy: _accuracy_md(acc)}

        @page_errors
        def on_export(state: Any) -> dict[Any, Any]:
            return {self.csv: str(core.versions.scores_csv(state.session_id, state.owner))}

        def on_tab_selected(state: Any, turn_id: Any) -> dict[Any, Any]:
            """Opening the tab lists the turns finished since the page last redrew (a turn that ended while the
            evaluator was on another tab); the turn already picked stays picked while it is still listed."""
            if state is None:
                return {}
            choices = core.versions.turn_choices(state.session_id, state.owner)
            keep = turn_id if any(tid == turn_id for _, tid in choices) else None
            return {self.turn: gr.update(choices=choices, value=keep)}

        self.tab.select(on_tab_selected, [ui, self.turn], [self.turn], show_progress="hidden", **private)
        self.turn.input(on_turn, [ui, self.turn], everything, **private)
        inputs = [ui, self.turn, self.subtask, self.level, self.partial, self.comment, self.evaluator]
        self.save.click(on_save, inputs, everything, **private)
        self.export.click(on_export, [ui], everything, **private)
        self.level.change(lambda lv: gr.update(interactive=lv == "partial"), [self.level], [self.partial], **private)


def _rows(acc: dict[str, Any]) -> list[list[Any]]:
    return [
        [s.get("turn_number") or s["turn_id"], s["subtask_id"], s["score"], s["comment"], s["evaluator"]]
        for s in acc["scores"]
    ]


VERDICT_HEADERS = ["turn", "subtask", "tool", "context", "verdict", "who", "when", "why costa could not vouch"]


def verdict_rows(rows: list[Any]) -> list[list[Any]]:
    """The proposals table: one row per proposed subtask (`costa.session.verdicts.ProposalRow`)."""
    out = []
    for r in rows:
        verdict = r.verdict + (f" (turn {r.refined_by})" if r.refined_by else "")
        who = r.who or ("—" if r.when is None else "no login")
        out.append([r.turn_number, r.subtask_id, r.tool, r.context, verdict, who, iso_time(r.when), r.reason])
    return out


def _accuracy_md(acc: dict[str, Any]) -> str:
    if acc["overall"] is None:
        return "_No scores yet._"
    numbers = acc.get("numbers", {})
    tasks = " · ".join(f"turn {numbers.get(k) or k}: {v:.2f}" for k, v in acc["tasks"].items())
    return f"**Overall accuracy {acc['overall']:.3f}** over {len(acc['tasks'])} task(s) · {tasks}"


def build_evaluator() -> Evaluation:
    """Lay out the tab (inside the page's Tabs) and return its `Evaluation` for wiring."""
    with gr.Tab("Evaluate", id="evaluate") as tab:
        gr.Markdown(
            "Score each subtask of a finished turn: **full** (1), **partial** (0.1–0.9) or **fail** (0). "
            "Task accuracy = mean of its subtasks; overall accuracy = mean of the tasks."
        )
        with gr.Row(equal_height=False):
            with gr.Column(scale=5):
                turn = gr.Dropdown(label="Turn", choices=[], interactive=True, elem_id="eval-turn")
                detail = gr.Markdown("_Pick a turn._")
                compare = gr.ImageSlider(
                    label="◀ Before (left) · After this turn (right) ▶", type="numpy", format="png"
                )
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
                    wrap=False,
                    column_widths=["12%", "14%", "12%", "40%", "22%"],
                    elem_id="scores-table",
                )
                with gr.Row():
                    export = gr.Button("Export scores and verdicts (CSV)")
                    csv = gr.File(label="Scores CSV", interactive=False)
        gr.Markdown("**Proposals and verdicts** — results costa could not vouch for, and what you decided")
        verdicts = gr.Dataframe(
            headers=VERDICT_HEADERS,
            value=[],
            interactive=False,
            wrap=True,
            column_widths=["6%", "7%", "12%", "22%", "11%", "8%", "14%", "20%"],
            elem_id="verdicts-table",
        )
    return Evaluation(
        tab,
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
        verdicts,
    )
