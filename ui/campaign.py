"""The Campaign tab: an evaluator scores their queue of a campaign blind, one subtask at a time.

The evaluator is the signed-in user with COSTA_AUTH, otherwise the name they type. They see only their own items
(`costa.campaign.desk`): the task's turns, the subtask's instruction, before / after in a slider (and a reference made
by people when the task has one), and nothing that reveals the condition or costa's own verdict. Scores: Fail (0),
0.1 … 0.9 (partial), Full (1), each a button that saves with the comment and moves on to the next subtask not scored
yet; Back / Next move through the queue to change a score. Keyboard: F full, X or 0 fail, 1–9 partial, ← / B back,
→ / N next (not while typing in the comment). The admin view (progress per evaluator, agreement, the cost–quality
plot) opens only for the campaign's admins when login is on.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any

import gradio as gr

from costa.campaign.desk import CampaignDesk, Card
from costa.campaign.stats import LEVELS
from costa.errors import InputError
from ui.state import Page, page_errors

PRIVATE: dict[str, Any] = {"api_visibility": "private"}
KEYS_HELP = "Keys: **F** full · **X** / **0** fail · **1–9** partial 0.1–0.9 · **←** / **B** back · **→** / **N** next"

#: Page script (`launch(head=…)`): score keys click the tab's buttons while the Campaign tab is on screen.
HEAD = """
<script>
document.addEventListener("keydown", (e) => {
  const t = e.target;
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if (t && (t.tagName === "TEXTAREA" || t.tagName === "INPUT" || t.tagName === "SELECT" || t.isContentEditable)) return;
  const card = document.getElementById("cmp-card");
  if (!card || card.offsetParent === null) return;
  const map = {f: "cmp-s10", x: "cmp-s0", "0": "cmp-s0", arrowleft: "cmp-back", b: "cmp-back",
               arrowright: "cmp-next", n: "cmp-next"};
  for (let i = 1; i <= 9; i++) map[String(i)] = "cmp-s" + i;
  const id = map[(e.key || "").toLowerCase()];
  const button = id && document.getElementById(id);
  if (button && !button.disabled) { e.preventDefault(); button.click(); }
});
</script>
"""


@dataclass
class CampaignState:
    """One browser tab's place in a campaign (who, which campaign, which subtask)."""

    name: str = ""
    evaluator: str = ""
    index: int = 0
    item: str = ""
    unit: str = ""


@dataclass
class CampaignTab:
    state: gr.State
    campaign: gr.Dropdown
    who: gr.Textbox
    open: gr.Button
    progress: gr.Markdown
    task: gr.Markdown
    slider: gr.ImageSlider
    reference: gr.Image
    scores: list[gr.Button]
    comment: gr.Textbox
    current: gr.Markdown
    back: gr.Button
    next: gr.Button
    admin_show: gr.Button
    admin: gr.Markdown
    plot: gr.Image

    @property
    def card_outputs(self) -> list[Any]:
        return [self.state, self.progress, self.task, self.slider, self.reference, self.comment, self.current]


def _level_label(k: int) -> str:
    return "Fail · 0 (X)" if k == 0 else "Full · 1 (F)" if k == 10 else f"{k / 10:.1f} ({k})"


def _score_button(k: int) -> gr.Button:
    label, eid = _level_label(k), f"cmp-s{k}"
    if k in (0, 10):
        return gr.Button(label, elem_id=eid, min_width=60, size="sm", variant="primary")
    return gr.Button(label, elem_id=eid, min_width=60, size="sm", variant="secondary")


def build_campaign() -> CampaignTab:
    """Lay out the tab (inside the page's Tabs)."""
    with gr.Tab("Campaign", id="campaign"):
        state = gr.State(CampaignState())
        gr.Markdown(
            "Score each subtask: did the **after** image do what the instruction asked, and nothing else? "
            "**Full** (1), **partial** (0.1–0.9) or **fail** (0). " + KEYS_HELP
        )
        with gr.Row():
            campaign = gr.Dropdown(label="Campaign", choices=[], interactive=True, elem_id="cmp-campaign", scale=3)
            who = gr.Textbox(label="Your evaluator name (the signed-in user when login is on)", elem_id="cmp-who",
                             scale=3)  # fmt: skip
            open_ = gr.Button("Open my queue", variant="primary", elem_id="cmp-open", scale=1)
        progress = gr.Markdown("_Choose a campaign and open your queue._", elem_id="cmp-progress")
        with gr.Row(equal_height=False, elem_id="cmp-card"):
            with gr.Column(scale=6):
                slider = gr.ImageSlider(label="◀ Before · After ▶", type="numpy", format="png", elem_id="cmp-slider")
                reference = gr.Image(label="Reference result made by people", type="numpy", visible=False,
                                     interactive=False, elem_id="cmp-reference")  # fmt: skip
            with gr.Column(scale=4):
                task = gr.Markdown(elem_id="cmp-task")
                comment = gr.Textbox(label="Comment (type it before you score)", lines=2, elem_id="cmp-comment")
                with gr.Row():
                    scores = [_score_button(k) for k in LEVELS]
                current = gr.Markdown(elem_id="cmp-current")
                with gr.Row():
                    back = gr.Button("← Back", elem_id="cmp-back")
                    next_ = gr.Button("Next →", elem_id="cmp-next")
        with gr.Accordion("Admin: progress per evaluator, agreement, cost vs quality (shows the conditions)",
                          open=False):  # fmt: skip
            admin_show = gr.Button("Show progress and agreement", elem_id="cmp-admin-show")
            admin = gr.Markdown(elem_id="cmp-admin")
            plot = gr.Image(label="Cost vs human-scored quality per condition", type="numpy", interactive=False,
                            elem_id="cmp-plot")  # fmt: skip
    return CampaignTab(state, campaign, who, open_, progress, task, slider, reference, scores, comment, current,
                       back, next_, admin_show, admin, plot)  # fmt: skip


def card_markdown(card: Card) -> str:
    """The task's turns (this subtask's turn marked) and what the subtask was asked to do — nothing else."""
    lines = [f"**Task** ({len(card.turns)} turn{'s' if len(card.turns) > 1 else ''}):"]
    lines.append("")
    for n, text in enumerate(card.turns, 1):
        quoted = f"“{escape(text)}”"
        lines.append(f"{n}. **▶ {quoted}**" if n == card.turn else f"{n}. {quoted}")
    lines.append("")
    lines.append(f"**This subtask** (turn {card.turn}): {escape(card.description)}")
    (bw, bh), (aw, ah) = card.sizes
    if bw and aw:
        same = (bw, bh) == (aw, ah)
        lines.append(f"\nImage size: {bw} × {bh} px" + (" (unchanged)" if same else f" → {aw} × {ah} px"))
    if card.answer:
        lines.append(f"\n**Its answer:** {escape(card.answer)}")
    return "\n".join(lines)


def _progress_md(card: Card) -> str:
    return (f"**Item {card.item_number} of {card.items}** · subtask {card.index + 1} of {card.total} · "
            f"**{card.scored} of {card.total} scored**")  # fmt: skip


def _current_md(card: Card) -> str:
    if card.score is None:
        return "_Not scored yet._"
    note = f" — “{escape(card.comment)}”" if card.comment else ""
    return f"Your score: **{card.score:g}**{note} (score again to change it)"


def wire_campaign(tab: CampaignTab, page: Page) -> None:
    """Connect the tab's events (after every tab is built)."""
    desk = CampaignDesk(page.core)
    login = bool(page.core.settings.auth)

    def refresh(state: Any) -> dict[Any, Any]:
        out: dict[Any, Any] = {tab.campaign: gr.update(choices=desk.campaigns())}
        if state.owner:
            out[tab.who] = gr.update(value=state.owner, interactive=False)
        return out

    page.add([tab.campaign, tab.who], refresh)

    def show(cs: CampaignState, index: int) -> dict[Any, Any]:
        card = desk.card(cs.name, cs.evaluator, index)
        if card is None:
            return {tab.state: cs, tab.progress: "_Nothing to score yet: the items assigned to you have not run._",
                    tab.task: "", tab.slider: None, tab.reference: gr.update(value=None, visible=False),
                    tab.comment: "", tab.current: ""}  # fmt: skip
        cs.index, cs.item, cs.unit = card.index, card.item, card.unit
        return {
            tab.state: cs,
            tab.progress: _progress_md(card),
            tab.task: card_markdown(card),
            tab.slider: (card.before, card.after),
            tab.reference: gr.update(value=card.reference, visible=card.reference is not None),
            tab.comment: card.comment,
            tab.current: _current_md(card),
        }

    @page_errors
    def on_open(ui: Any, cs: CampaignState, name: Any, typed: Any) -> dict[Any, Any]:
        if not name:
            raise InputError("choose a campaign first")
        who = ui.owner if ui is not None and ui.owner else typed
        cs = CampaignState(str(name), desk.check_evaluator(str(name), who))
        return show(cs, desk.first_open(cs.name, cs.evaluator))

    def scorer(k: int) -> Any:
        @page_errors
        def on_score(cs: CampaignState, comment: Any) -> dict[Any, Any]:
            if not cs.item:
                raise InputError("open your queue first")
            nxt = desk.save(cs.name, cs.evaluator, cs.item, cs.unit, k / 10, comment)
            return show(cs, nxt)

        return on_score

    @page_errors
    def on_move(cs: CampaignState, step: int) -> dict[Any, Any]:
        if not cs.item:
            raise InputError("open your queue first")
        return show(cs, cs.index + step)

    @page_errors
    def on_admin(ui: Any, name: Any) -> dict[Any, Any]:
        if not name:
            raise InputError("choose a campaign first")
        desk.check_admin(str(name), ui.owner if ui is not None else None, login)
        rows, report, image = desk.admin(str(name))
        return {tab.admin: admin_markdown(rows, report), tab.plot: image}

    outputs = tab.card_outputs
    tab.open.click(on_open, [page.ui, tab.state, tab.campaign, tab.who], outputs, **PRIVATE)
    for k, button in zip(LEVELS, tab.scores, strict=True):
        button.click(scorer(k), [tab.state, tab.comment], outputs, **PRIVATE)
    tab.back.click(lambda cs: on_move(cs, -1), [tab.state], outputs, **PRIVATE)
    tab.next.click(lambda cs: on_move(cs, 1), [tab.state], outputs, **PRIVATE)
    tab.admin_show.click(on_admin, [page.ui, tab.campaign], [tab.admin, tab.plot], **PRIVATE)


def admin_markdown(rows: list[Any], report: dict[str, Any]) -> str:
    """Progress per evaluator, agreement so far and the per-condition table, for the admin."""
    from costa.campaign.conditions import Condition

    lines = ["| evaluator | scored | ready subtasks | items ready / assigned |", "|---|---|---|---|"]
    lines += [f"| {escape(p.evaluator)} | {p.scored_subtasks} | {p.ready_subtasks} | {p.ready_items} / "
              f"{p.assigned_items} |" for p in rows]  # fmt: skip
    a = report["agreement"]

    def fmt(x: float | None) -> str:
        return "–" if x is None else f"{x:.3f}"

    lines.append("")
    lines.append(f"**Agreement so far:** Krippendorff's α (interval) {fmt(a['krippendorff_alpha_interval'])} · "
                 f"pairwise Cohen's κ (linear) {fmt(a['pairwise_cohen_kappa'])}")  # fmt: skip
    for p in a["pairs"]:
        pair = " & ".join(escape(e) for e in p["evaluators"])
        lines.append(f"- {pair}: κ {fmt(p['kappa'])} over {p['n']} subtasks")
    lines += [
        "",
        "| condition | items scored | task accuracy | tool s / task | turn s / task |",
        "|---|---|---|---|---|",
    ]
    for r in report["conditions"]:
        label = Condition.from_dict(r["condition"]).label
        lines.append(f"| {label} | {r['n_items']} | {fmt(r['task_accuracy'])} | {fmt(r['tool_seconds_per_task'])} | "
                     f"{fmt(r['turn_seconds_per_task'])} |")  # fmt: skip
    return "\n".join(lines)
