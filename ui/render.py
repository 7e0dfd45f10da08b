"""What a turn looks like: pure functions draw a `TurnView` as chat messages, diagrams and a cost ledger.

The same code draws a live turn and a reloaded one, so a page refresh shows exactly what the user saw. Diagrams are
Mermaid inside Markdown (Gradio bundles the renderer, so they draw offline): the subtask tree, and the tool subgraph
with every node marked idle / queued / running / executed / retried / failed, the chosen A* path (or, before a run,
the predicted one) drawn thick. The turn itself is folded from events by `costa.session.view.TurnView`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from costa.graph import GOAL, START
from costa.session.view import CallRow, GraphLayout, NodeKey, TurnView, path_keys
from costa.types import Plan
from ui.ledger import ledger_markdown, prediction_markdown, session_totals

__all__ = [
    "CallRow",
    "GraphLayout",
    "NodeKey",
    "TurnView",
    "ledger_markdown",
    "path_keys",
    "prediction_markdown",
    "session_totals",
]

#: Above this many drawn nodes, tool-graph nodes the search never touched are left out of the drawing.
MAX_DRAWN_NODES = 48

_CLASSES = """
  classDef idle fill:#f4f4f5,stroke:#a1a1aa,color:#52525b
  classDef queued fill:#ffffff,stroke:#6366f1,stroke-dasharray:5 3,color:#312e81
  classDef running fill:#fef9c3,stroke:#ca8a04,stroke-width:3px,color:#713f12
  classDef executed fill:#dcfce7,stroke:#16a34a,color:#14532d
  classDef retried fill:#ffedd5,stroke:#ea580c,stroke-width:2px,color:#7c2d12
  classDef failed fill:#fee2e2,stroke:#dc2626,stroke-width:2px,color:#7f1d1d
  classDef chosen fill:#dbeafe,stroke:#1d4ed8,stroke-width:4px,color:#1e3a8a
  classDef predicted fill:#eff6ff,stroke:#1d4ed8,stroke-width:2px,stroke-dasharray:6 3,color:#1e3a8a
  classDef endpoint fill:#e0e7ff,stroke:#4338ca,color:#312e81
  classDef instr fill:#f8fafc,stroke:#334155,color:#0f172a
  classDef pending fill:#ffffff,stroke:#94a3b8,color:#334155
  classDef done fill:#dcfce7,stroke:#16a34a,color:#14532d
  classDef skipped fill:#f4f4f5,stroke:#a1a1aa,stroke-dasharray:4 3,color:#52525b
  classDef unsupported fill:#fee2e2,stroke:#dc2626,stroke-dasharray:4 3,color:#7f1d1d
  classDef stopped fill:#f4f4f5,stroke:#71717a,stroke-dasharray:4 3,color:#3f3f46
  classDef unverified fill:#fef3c7,stroke:#d97706,stroke-width:2px,stroke-dasharray:6 3,color:#78350f
  classDef proposed fill:#fdf4ff,stroke:#c026d3,stroke-width:2px,stroke-dasharray:6 3,color:#701a75"""


def esc(text: object, limit: int = 48) -> str:
    """Text safe inside a quoted Mermaid label (entity codes for the characters Mermaid or Markdown would read)."""
    s = str(text)
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    for a, b in (("#", "#35;"), ('"', "#quot;"), ("<", "#lt;"), (">", "#gt;"), ("`", "#96;"), ("\n", " ")):
        s = s.replace(a, b)
    return s


def subtask_title(plan: Plan, sid: str, names: Mapping[str, str]) -> str:
    s = plan.by_id(sid)
    title = f"{sid} · {names.get(s.kind, s.kind)}"
    if s.target and s.result:
        return f"{title}: '{s.target}' → '{s.result}'"
    if s.target:
        return f"{title}: '{s.target}'"
    if s.result:
        return f"{title}: '{s.result}'"
    return title


# ------------------------------------------------------------------------------------------------------ chat


def _verdict(row: CallRow, threshold: float) -> tuple[str, str]:
    if row.stopped:  # Stop (or a reload) ended it: neither passed nor failed, as the ledger says
        return "stopped", "**Stopped** before its check: the result of this call was dropped."
    if row.passed is None:
        return "running…", ""
    mark = "✅ passed" if row.passed else "❌ failed"
    q = f"quality {row.quality:.2f} {'≥' if row.passed else '<'} threshold {threshold:.2f}"
    why = "\n".join(f"- {r}" for r in row.reasons) or "- (no reasons given)"
    body = f"**Check: {mark}** — {q}\n\n{why}"
    if row.dropped:
        body += f"\n\n**Dropped:** {row.dropped}; the search goes on with the next best path."
    return f"{mark[2:]} · q {row.quality:.2f}", body


def chat_messages(view: TurnView) -> list[dict[str, Any]]:
    """The turn as chat messages: the instruction, the plan, one message per subtask with nested tool calls."""
    tid = f"t{view.turn_id}" if view.turn_id is not None else "tlive"
    user = view.instruction + (f"\n\n📍 {view.region_note}" if view.region_note else "")
    user += f"\n\n↪ {view.reading}" if view.reading else ""  # how 'it' was read: visible, not folded in the plan
    msgs: list[dict[str, Any]] = [{"role": "user", "content": user}]
    plan = view.plan
    if plan is None and view.status != "planning" and (view.notes or view.question or view.errors):
        # a history command in words, a change back, or a question: said in one message, nothing was planned
        said = [*view.notes, *(f"❓ {view.question}" for _ in [0] if view.question)]
        said += [f"⚠️ {e}" for e in view.errors]
        msgs.append({"role": "assistant", "content": "\n\n".join(said), "metadata": {"id": f"{tid}-said"}})
        return msgs
    if plan is None:
        title = "🧭 Planning…" if view.status == "planning" else "🧭 No plan"
        msgs.append(
            {
                "role": "assistant",
                "content": _llm_lines(view) or "Reading the instruction…",
                "metadata": {"title": title, "id": f"{tid}-plan", "status": "pending"}
                if view.status == "planning"
                else {"title": title, "id": f"{tid}-plan"},
            }
        )
    else:
        lines = [f"{i}. {subtask_title(plan, s.id, view.names)}" for i, s in enumerate(plan.subtasks, 1)]
        lines += [f"- ⚠️ not supported: “{u.text}” — {u.reason}" for u in plan.unsupported]
        lines += [f"- {n}" for n in view.notes]
        extra = _llm_lines(view)
        if extra:
            lines.append(extra)
        who = "LLM planner" if plan.planner != "rules" else "offline rule planner"
        n = len(plan.subtasks)
        msgs.append(
            {
                "role": "assistant",
                "content": "\n".join(lines) or "Nothing to do.",
                "metadata": {
                    "title": f"🧭 Plan · {n} subtask{'s' if n != 1 else ''} ({who}, {plan.form})",
                    "id": f"{tid}-plan",
                    "duration": round(view.planner_seconds, 3),
                    "status": "done",
                },
            }
        )
        for s in plan.subtasks:
            msgs.extend(_subtask_messages(view, tid, s.id))
    final = final_text(view)
    if final:
        msgs.append({"role": "assistant", "content": final})
    return msgs


def _llm_lines(view: TurnView) -> str:
    if not view.llm:
        return ""
    tokens = sum(c.prompt_tokens + c.completion_tokens for c in view.llm)
    failed = sum(1 for c in view.llm if not c.ok)
    return f"LLM: {len(view.llm)} call(s), {tokens} tokens" + (f", {failed} failed" if failed else "")


_STATE_ICONS = {
    "done": "✅",
    "skipped": "⏭️",
    "failed": "❌",
    "running": "⏳",
    "pending": "•",
    "stopped": "⏹️",
    "unverified": "🎯",
    "proposed": "🔍",
    "kept": "🔒",
}


def _subtask_messages(view: TurnView, tid: str, sid: str) -> list[dict[str, Any]]:
    assert view.plan is not None
    state = view.subtask_state(sid)
    rows = [c for c in view.calls if c.subtask_id == sid]
    seconds = sum(c.seconds or 0.0 for c in rows)
    icon = _STATE_ICONS[state]
    meta: dict[str, Any] = {"title": f"{icon} {subtask_title(view.plan, sid, view.names)}", "id": f"{tid}-{sid}"}
    if rows:
        meta["duration"] = round(seconds, 3)
    if state in ("running", "pending") and view.status in ("planning", "searching"):
        meta["status"] = "pending"
    done = view.done_subtasks.get(sid)
    if done is not None:
        meta["log"] = f"quality {done.quality:.2f}" + (f" · {view.served[sid]}" if sid in view.served else "")
        body = f"Done via **{' → '.join(done.tools)}** · quality {done.quality:.2f}"
        if done.subtask_kind in view.unreferenced:
            body = (
                f"Answered via **{' → '.join(done.tools)}** · ⚠ the answer is not verified: only its form was "
                "checked (nothing here to compare it with) — judge it yourself"
            )
        if done.result:
            body += f"\n\nResult: {done.result}"
    elif state == "skipped":
        detail = view.unavailable[sid]
        plain = view.plain.get(sid)
        body = (
            f"Not run: {detail}"
            if plain is None
            else f"Not run: {plain}\n\n<details><summary>details</summary>\n\n{detail}\n\n</details>"
        )
        if sid in view.needs_pointing:
            body = "📍 **Point at the target**: " + pointing_hint(view, sid) + "\n\n" + body
    elif state == "failed":
        body = "Not done: no tool path for this subtask passed its checks." if rows else "Not done."
        if sid in view.needs_pointing:
            body = "📍 **Point at the target**: " + pointing_hint(view, sid) + "\n\n" + body
    elif state == "kept":
        body = (
            "Located, to keep as it is: every edit of this turn leaves it unchanged (its pixels are put back after "
            "each tool, and each edit's check verifies it)."
        )
    elif state == "stopped":
        body = "Stopped before this subtask finished."
    elif state == "proposed":
        p = view.proposed[sid]
        body = f"Proposed via **{' → '.join(p.tools)}** · passed its checks (quality {p.quality:.2f}); {p.reason}"
    elif state == "unverified":
        u = view.unverified[sid]
        body = f"Not done: the target was found but not verified — {'; '.join(u.missing)}. {u.summary}"
    else:
        body = "Searching for the cheapest good tool path…" if rows else "Waiting for its turn in the plan."
    if sid in view.ask_pointing and state != "skipped" and state != "failed":
        body = "📍 **" + asked_pointing_line(view, sid) + "**\n\n" + body
    for panel in view.panels.get(sid, ()):
        body += f"\n\n**{panel.title}** — {panel.body}"
        if panel.actions:
            body += "\n\n" + " · ".join(f"`{a}`" for a in panel.actions)
    msgs = [{"role": "assistant", "content": body, "metadata": meta}]
    for i, row in enumerate(rows):
        log, verdict = _verdict(row, view.threshold)
        child: dict[str, Any] = {
            "title": f"🔧 {row.tool}" + (f" · retry {row.attempt}" if row.attempt else ""),
            "id": f"{tid}-{sid}-{i}",
            "parent_id": f"{tid}-{sid}",
            "log": log,
        }
        if row.seconds is not None:
            child["duration"] = round(row.seconds, 3)
            child["status"] = "done"
        else:
            child["status"] = "pending"
        msgs.append({"role": "assistant", "content": verdict or "Running…", "metadata": child})
    return msgs


def pointing_hint(view: TurnView, sid: str) -> str:
    assert view.plan is not None
    target = view.plan.by_id(sid).target
    what = f"**'{target}'**" if target else "the main subject"  # "blur the background": what it keeps is unnamed
    return (
        f"this machine cannot find {what} by itself. Click on it in the image (one click picks the region "
        "around the click; two clicks span a box), paint over it with the brush, or type a box x,y,w,h, then press "
        "Send again."
    )


def asked_pointing_line(view: TurnView, sid: str) -> str:
    """What reflection asks the user to point at for subtask `sid` (a ReflectionRetry "ask_user"), and why."""
    assert view.plan is not None
    target = view.plan.by_id(sid).target or "the target"
    why = view.ask_pointing.get(sid, "")
    return f"Point at '{target}'" + (f": reflection doubts the target ({why})" if why else "")


def points_hint(view: TurnView | None) -> str | None:
    """The pointing status line when reflection asked the user to point at a target (None when it did not)."""
    if view is None or view.plan is None or not view.ask_pointing:
        return None
    targets = ", ".join(dict.fromkeys(f"'{view.plan.by_id(sid).target or 'the target'}'" for sid in view.ask_pointing))
    return (
        f"📍 Point at {targets}: reflection doubts the target. Click it in the image, type its box, or paint it with "
        "the brush below, then press Send again."
    )


def log_lines(view: TurnView) -> list[str]:
    """The turn as plain text lines (API clients, logs)."""
    lines: list[str] = []
    if view.plan is not None:
        lines.append("plan: " + ("; ".join(s.describe() for s in view.plan.subtasks) or "nothing"))
    for sid, why in view.unavailable.items():
        lines.append(f"cannot run {sid}: {why}")
    for c in view.calls:
        if c.seconds is None:
            lines.append(f"run {c.subtask_id} {c.tool} (attempt {c.attempt}): running")
            continue
        mark = "pass" if c.passed else "FAIL"
        lines.append(
            f"run {c.subtask_id} {c.tool} (attempt {c.attempt}): {c.seconds:.3f} s, quality {c.quality:.2f} {mark}"
            + (f" — {'; '.join(c.reasons)}" if c.reasons else "")
        )
    if view.path is not None:
        steps = " → ".join(t for _, t in view.path.path)
        lines.append(f"chosen path: {steps} ({view.path.seconds:.3f} s, quality {view.path.quality:.2f})")
    for sid, d in view.done_subtasks.items():
        lines.append(f"done {sid} {d.subtask_kind}: quality {d.quality:.2f} — {d.result}")
    for sid, u in view.unverified.items():
        lines.append(f"unverified {sid} {u.target!r}: {u.summary}")
    lines += [f"error: {e}" for e in view.errors]
    if view.question:
        lines.append(f"question: {view.question}")
    if view.outcome is not None or view.status == "stopped":
        t = view.totals()
        lines.append(
            f"turn {view.status}: {t['seconds']:.2f} s, {t['executions']:.0f} tool runs, "
            f"{t['tool_seconds']:.3f} tool-seconds"
        )
    return lines


def final_text(view: TurnView) -> str:
    """The closing chat message: outcome, costs, text results, and what the user can do next."""
    lines: list[str] = []
    if view.question:
        lines.append(f"❓ {view.question}")
    said = (
        ("no subtask can run here", "No tool path passed")
        if view.status == "unverified"
        else ("no subtask can run here",)
    )
    lines += [f"⚠️ {e}" for e in view.errors if not e.startswith(said)]
    pointing = sorted(sid for sid in view.needs_pointing if sid not in view.done_subtasks)
    if pointing and view.plan is not None:
        hint = pointing_hint(view, pointing[0])
        lines.append("📍 " + hint[:1].upper() + hint[1:])
    if view.ask_pointing and view.plan is not None:
        asked = "; ".join(asked_pointing_line(view, sid) for sid in sorted(view.ask_pointing))
        lines.append(
            f"📍 **{asked}.** Click it in the image, type its box or paint it with the brush (opened on the left), "
            "then press Send again: the instruction is kept."
            + (" Nothing was saved: the image is as it was before this turn." if view.result_version is None else "")
        )
    t = view.totals()
    if view.status == "stopped":
        why = " when the page was reloaded or closed" if view.stopped_by == "left" else ""
        lines.append(f"⏹️ **Stopped{why}** after {t['executions']:.0f} tool run(s); the image is unchanged.")
    elif view.outcome is not None:
        cost = f"{t['executions']:.0f} tool run(s), {t['tool_seconds']:.2f} tool-seconds, turn {t['seconds']:.2f} s"
        if view.status == "unverified":
            from ui.targets_view import unverified_text

            if view.unverified:  # a candidate was found: the pointing hint is said with the actions below
                lines = [line for line in lines if not line.startswith("📍")]
            lines.append(unverified_text(view))
        elif view.status == "proposed":
            from ui.proposal_view import turn_line

            lines.append(turn_line(view, cost))
        elif view.status == "done":
            lines.append(f"✅ **Done** · {cost} · path quality {view.outcome.quality:.2f}")
        elif (
            view.status == "partial"
            and view.plan is not None
            and set(view.done_subtasks) >= {s.id for s in view.plan.subtasks}
        ):  # every subtask ran; reflection kept a best attempt below its threshold
            if view.ask_pointing and view.result_version is None:
                lines.append(f"☑️ **Not accepted by reflection** · {cost} · waiting for you to point (nothing saved)")
            else:
                lines.append(f"☑️ **Done, not accepted by reflection** · {cost} · the best attempt was kept (see above)")
        elif view.status == "partial":
            lines.append(f"☑️ **Partly done** · {cost} · some subtasks were not run (see above)")
        else:
            lines.append(f"❌ **Nothing changed** · {cost}")
        reads = [
            f"- {sid}: {d.result}" for sid, d in view.done_subtasks.items() if d.result and d.subtask_kind in view.reads
        ]
        if reads:
            lines.append("**Results:**\n" + "\n".join(reads))
        if view.result_version is not None:
            number = view.result_number or view.result_version
            lines.append(f"New version **v{number}** (undo returns to the previous one).")
    elif view.status == "failed" and not lines:
        lines.append("❌ Nothing could be done.")
    if view.served:  # fast–slow mode: which learned rule (or the local A*) served each subtask
        lines.append("**Served by (fast–slow):** " + " · ".join(f"{sid}: {how}" for sid, how in view.served.items()))
    return "\n\n".join(lines)


# --------------------------------------------------------------------------------------------------- diagrams


def tree_markdown(view: TurnView | None) -> str:
    """The subtask tree (or chain) as a Mermaid flowchart, each subtask coloured by its state."""
    if view is None or view.plan is None:
        return "_The plan appears here when you send an instruction._"
    plan = view.plan
    lines = ["```mermaid", "flowchart TD", f'  I["“{esc(view.instruction, 60)}”"]:::instr']
    ids = {s.id: f"s{i}" for i, s in enumerate(plan.subtasks)}
    for s in plan.subtasks:
        state = view.subtask_state(s.id)
        detail = ""
        done = view.done_subtasks.get(s.id)
        if done is not None:
            detail = f"<br/>✓ q {done.quality:.2f}"
        elif s.id in view.needs_pointing:
            detail = "<br/>needs pointing"
        elif state == "unverified":
            detail = "<br/>target not verified"
        elif state == "proposed":
            detail = "<br/>proposed: have a look"
        elif state == "skipped":
            detail = "<br/>no ready tool"
        elif state == "kept":
            detail = "<br/>located: kept unchanged"
        elif state == "running":
            detail = "<br/>running…"
        label = esc(subtask_title(plan, s.id, view.names), 56)
        lines.append(f'  {ids[s.id]}["{label}{detail}"]:::{"done" if state in ("done", "kept") else state}')
    for i, u in enumerate(plan.unsupported):
        lines.append(f'  u{i}["unsupported: {esc(u.text, 40)}"]:::unsupported')
        lines.append(f"  I -.-> u{i}")
    order = [s.id for s in plan.subtasks]
    for k, s in enumerate(plan.subtasks):
        if s.parents:
            for p in s.parents:
                lines.append(f"  {ids[p]} --> {ids[s.id]}")
        else:
            lines.append(f"  I --> {ids[s.id]}")
        if plan.form == "chain" and k > 0 and order[k - 1] not in s.parents:
            lines.append(f"  {ids[order[k - 1]]} -. then .-> {ids[s.id]}")
    lines += _CLASSES.splitlines()
    lines.append("```")
    return "\n".join(lines)


def graph_markdown(view: TurnView | None, layout: GraphLayout | None = None) -> str:
    """The tool subgraph as a Mermaid flowchart: node states, the chosen (or predicted) A* path drawn thick."""
    layout = layout or (view.layout if view else None)
    if layout is None or not layout.nodes:
        if view is not None and view.unavailable:
            return "_No tool path can run here:_\n\n" + "\n".join(f"- {k}: {v}" for k, v in view.unavailable.items())
        return "_The tool subgraph appears here once there is an image and an instruction._"
    state = dict(view.node_state) if view else {}
    chosen = view.chosen if view else []
    predicted = (view.predicted if view else []) if not chosen else []
    on_path = chosen or predicted
    nodes = list(layout.nodes)
    hidden = 0
    if len(nodes) > MAX_DRAWN_NODES:
        keep = [n for n in nodes if state.get(n, "idle") != "idle" or n in on_path]
        hidden = len(nodes) - len(keep)
        nodes = keep
    nid: dict[Any, str] = {n: f"n{i}" for i, n in enumerate(nodes)}  # step nodes, plus the START / GOAL markers
    nid[START], nid[GOAL] = "S", "G"
    lines = ["```mermaid", "flowchart LR", "  S([START]):::endpoint", "  G([GOAL]):::endpoint"]
    groups: dict[str, list[NodeKey]] = {}
    for n in nodes:
        groups.setdefault(n[0], []).append(n)
    names = view.names if view else {}
    plan = view.plan if view else None
    for sid, members in groups.items():
        title = subtask_title(plan, sid, names) if plan is not None else sid
        lines.append(f'  subgraph g_{esc(sid, 20)}["{esc(title, 60)}"]')
        for n in members:
            lines.append(f'    {nid[n]}["{_node_label(n, layout, view)}"]:::{_node_class(n, state, chosen, predicted)}')
        lines.append("  end")
        lines.append(f"  style g_{esc(sid, 20)} fill:#f8fafc,stroke:#cbd5e1")
    edges = [(u, v) for u, v in layout.edges if u in nid and v in nid]
    path_edges = set(zip([START, *on_path], [*on_path, GOAL], strict=True)) if on_path else set()
    styled: list[int] = []
    for i, (u, v) in enumerate(edges):
        lines.append(f"  {nid[u]} --> {nid[v]}")
        if (u, v) in path_edges:
            styled.append(i)
    lines += _CLASSES.splitlines()
    if styled:
        dash = ",stroke-dasharray:6 3" if predicted else ""
        lines.append(f"  linkStyle {','.join(map(str, styled))} stroke:#1d4ed8,stroke-width:4px{dash}")
    lines.append("```")
    legend = (
        "<small>◻ idle · ┄ queued (estimate) · 🟨 running · 🟩 executed · 🟧 retried · 🟥 failed · "
        + ("🟦 chosen A* path" if chosen else "┅ predicted path for this α")
        + (f" · {hidden} untouched nodes not drawn" if hidden else "")
        + "</small>"
    )
    return "\n".join(lines) + "\n\n" + legend


def _node_label(n: NodeKey, layout: GraphLayout, view: TurnView | None) -> str:
    tool = esc(n[1][-1], 32)
    if view is not None and n in view.measured:
        s, q = view.measured[n]
        detail = f"{s:.2f} s · q {q:.2f}"
    elif n in layout.estimates:
        s, q = layout.estimates[n]
        detail = f"est {s:.2f} s · q {q:.2f}"
    else:
        detail = ""
    retries = view.retries.get(n, 0) if view else 0
    if retries:
        detail += f" · ↻{retries}"
    return f"{tool}<br/><small>{detail}</small>" if detail else tool


def _node_class(
    n: NodeKey, state: Mapping[NodeKey, str], chosen: Sequence[NodeKey], predicted: Sequence[NodeKey]
) -> str:
    s = state.get(n, "idle")
    if s == "failed":
        return "failed"
    if n in chosen:
        return "chosen"
    if s != "idle":
        return s
    return "predicted" if n in predicted else "idle"
