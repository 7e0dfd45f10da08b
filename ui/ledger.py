"""The cost ledger (per tool call, per subtask, the turn, the session) and the α preview's readout, as Markdown."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from costa.session.view import TurnView

# ----------------------------------------------------------------------------------------------------- ledger


def ledger_markdown(view: TurnView | None, session: Mapping[str, float] | None = None) -> str:
    """Cost ledger: per tool call, per subtask, this turn, and the session so far."""
    parts: list[str] = []
    if view is not None and (view.calls or view.outcome or view.llm):
        t = view.totals()
        overhead = max(0.0, t["seconds"] - t["tool_seconds"] - t["llm_seconds"])
        llm = f"{t['llm_calls']:.0f} LLM call(s), {t['llm_tokens']:.0f} tokens" if view.llm else "LLM: none"
        if t["llm_cost"]:
            llm += f", cost {t['llm_cost']:.4f}"
        number = view.turn_number or view.turn_id
        turn = f"turn {number}" if number is not None else "this turn"
        parts.append(
            f"**{turn}** · wall {t['seconds']:.2f} s · {t['executions']:.0f} tool run(s) · "
            f"{t['tool_seconds']:.3f} tool-s · {t['retries']:.0f} retr{'y' if t['retries'] == 1 else 'ies'} · "
            f"planning + search + checks {overhead:.2f} s · {llm}"
        )
        if view.calls:
            rows = ["| # | subtask | tool | try | seconds | quality | check |", "|---|---|---|---|---|---|---|"]
            for i, c in enumerate(view.calls, 1):
                sec = f"{c.seconds:.3f}" if c.seconds is not None else "…"
                q = f"{c.quality:.2f}" if c.quality is not None else "…"
                if c.stopped:
                    chk = "stopped"
                elif c.passed is None:
                    chk = "…"
                else:
                    chk = "pass" if c.passed else "fail" + (" (dropped)" if c.dropped else "")
                rows.append(f"| {i} | {c.subtask_id} | `{c.tool}` | {c.attempt} | {sec} | {q} | {chk} |")
            parts.append("\n".join(rows))
        if view.plan is not None and view.plan.subtasks:
            rows = ["| subtask | kind | path | runs | retries | tool-s | quality |", "|---|---|---|---|---|---|---|"]
            if view.served:  # fast–slow mode: the learned rule (or the local A*) that served each subtask
                rows = [rows[0] + " served by |", rows[1] + "---|"]
            for s in view.plan.subtasks:
                mine = [c for c in view.calls if c.subtask_id == s.id]
                done = view.done_subtasks.get(s.id)
                path = " → ".join(done.tools) if done else ("skipped" if s.id in view.unavailable else "—")
                if s.id in view.unverified and not done:
                    path = "target not verified"
                q = f"{done.quality:.2f}" if done else "—"
                tool_seconds = sum(c.seconds or 0 for c in mine)
                retries = sum(1 for c in mine if c.attempt > 0)
                name = view.names.get(s.kind, s.kind)
                row = f"| {s.id} | {name} | {path} | {len(mine)} | {retries} | {tool_seconds:.3f} | {q} |"
                if view.served:
                    row += f" {_cell(view.served.get(s.id, '—'))} |"
                rows.append(row)
            parts.append("\n".join(rows))
    if session:
        parts.append(
            f"**session** · {session.get('turns', 0):.0f} turn(s) · {session.get('executions', 0):.0f} tool run(s) · "
            f"{session.get('tool_seconds', 0):.3f} tool-s · {session.get('retries', 0):.0f} retries · "
            f"{session.get('llm_tokens', 0):.0f} LLM tokens · wall {session.get('seconds', 0):.2f} s"
        )
    return "\n\n".join(parts) or "_Costs appear here as tools run._"


def _cell(text: str) -> str:
    """Text safe in one Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def session_totals(summaries: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    keys = ("seconds", "tool_seconds", "executions", "retries", "llm_tokens", "llm_cost")
    out = {k: 0.0 for k in keys}
    out["turns"] = 0.0
    for s in summaries:
        out["turns"] += 1
        for k in keys:
            out[k] += float(s.get(k, 0) or 0)
    return out


def prediction_markdown(
    alpha: float, predictions: Sequence[tuple[float, Sequence[tuple[str, str]], float, float]], note: str = ""
) -> str:
    """The α slider's readout: predicted seconds and quality of the best path, at this α and across the range."""
    if note:
        return note
    if not predictions:
        return "_Type an instruction (with an image loaded) to see the predicted cost and quality of the best path._"
    rows = ["| α | predicted path | seconds | quality |", "|---|---|---|---|"]
    current = ""
    for a, path, seconds, quality in predictions:
        tools = " → ".join(t for _, t in path)
        mark = "**" if abs(a - alpha) < 1e-9 else ""
        rows.append(f"| {mark}{a:g}{mark} | {mark}{tools}{mark} | {seconds:.3f} | {quality:.2f} |")
        if abs(a - alpha) < 1e-9:
            current = f"**Prediction at α = {a:g}:** {seconds:.3f} s, quality {quality:.2f} via {tools}"
    return current + "\n\n" + "\n".join(rows)
