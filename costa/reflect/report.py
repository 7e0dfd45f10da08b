"""Reflection events for people: one line each for the CLI and chat, and a per-subtask panel (Markdown) for the page.

>>> from costa.events import Reflection
>>> ev = Reflection("s1", 1, ({"name": "instruction", "kind": "offline", "scores": {"semantic_alignment": 9.0,
...     "perceptual_quality": None, "aesthetics": None, "logical_consistency": None}, "score": 9.0, "positive": [],
...     "negative": []},), 9.0, "accept")
>>> describe_event(ev)
'reflect s1 attempt 1: S 9.0 → accept (instruction 9.0)'
>>> "| instruction | offline | 9.0 | – | – | – | 9.0 |" in panel_markdown([ev])
True
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from costa.reflect.protocol import DIMENSIONS

_SHORT = {
    "semantic_alignment": "sem.",
    "perceptual_quality": "perc.",
    "aesthetics": "aesth.",
    "logical_consistency": "logic",
}


def _num(v: Any) -> str:
    return "–" if v is None else f"{float(v):.1f}"


def describe_event(ev: Any) -> str:
    """One line for a reflection, reflection_retry, reflection_kept or expert_dropped event."""
    if ev.kind == "reflection":
        experts = ", ".join(f"{e['name']} {_num(e.get('score'))}" for e in ev.experts)
        if getattr(ev, "calibrated", True):
            line = f"reflect {ev.subtask_id} attempt {ev.attempt}: S {ev.score:.1f} → {ev.decision} ({experts})"
        else:
            line = (
                f"reflect {ev.subtask_id} attempt {ev.attempt}: S {ev.score:.1f} advisory — no expert's score has a "
                f"vote here on real-photo evidence, so it is shown, not used ({experts})"
            )
        merged = merged_lines(getattr(ev, "merged", None) or {})
        return line + ("; aggregator: " + "; ".join(merged) if merged else "")
    if ev.kind == "reflection_retry":
        if ev.action == "ask_user":
            return f"  ask   {ev.subtask_id}: point at the target (click or box) and run again — {ev.reason}"
        return f"  retry {ev.subtask_id} attempt {ev.attempt} by {ev.action}: {ev.reason}"
    if ev.kind == "reflection_kept":
        label = "accepted" if ev.accepted else "best of the attempts (below the threshold)"
        return f"kept  {ev.subtask_id} attempt {ev.attempt}, {label}: {ev.reason}"
    if ev.kind == "expert_dropped":
        return f"  drop expert {ev.expert} for {ev.subtask_id} attempt {ev.attempt}: {ev.reason}"
    return str(ev)


def merged_lines(merged: dict[str, Any]) -> list[str]:
    """The aggregator's merge (a `Reflection.merged` dict) as short lines: keep …, fix … (by action), its note.

    >>> merged_lines({"keep": ["the shape"], "fix": [{"text": "too pale", "action": "next_params"}], "note": ""})
    ['keep: the shape', 'fix: too pale (→ next_params)']
    """
    out = [f"keep: {k}" for k in merged.get("keep", [])]
    for f in merged.get("fix", []):
        action = f.get("action") or ""
        out.append(f"fix: {f.get('text', '')}" + (f" (→ {action})" if action else ""))
    if merged.get("note"):
        out.append(f"note: {merged['note']}")
    return out


def chat_note(ev: Any) -> str | None:
    """What the chat should say about a reflection event (None when nothing noteworthy: accepted at once)."""
    if ev.kind == "reflection_retry":
        if ev.action == "ask_user":
            return (
                f"🔎 Reflection on {ev.subtask_id}: the target may be wrong — point at it and send again ({ev.reason})."
            )
        return (
            f"🔎 Reflection rejected {ev.subtask_id} attempt {ev.attempt - 1} ({ev.reason}); retrying by {ev.action}."
        )
    if ev.kind == "reflection_kept":
        if ev.accepted and ev.attempt == 1:
            return None
        if ev.accepted:
            return f"🔎 {ev.subtask_id}: kept attempt {ev.attempt} (S {ev.score:.1f})."
        return f"🔎 {ev.subtask_id}: {ev.reason}."
    if ev.kind == "expert_dropped":
        return f"🔎 Expert {ev.expert} skipped for {ev.subtask_id}: {ev.reason}."
    return None


def panel_markdown(events: Iterable[Any]) -> str:
    """Per subtask: an experts × dimensions table for each attempt, S, the decision, and which attempt was kept."""
    by_sid: dict[str, list[Any]] = {}
    for ev in events:
        if getattr(ev, "kind", "") in ("reflection", "reflection_retry", "reflection_kept", "expert_dropped"):
            by_sid.setdefault(ev.subtask_id, []).append(ev)
    if not by_sid:
        return "_No reflection in this turn (switched off, or nothing ran)._"
    out: list[str] = []
    head = "| expert | kind | " + " | ".join(_SHORT[d] for d in DIMENSIONS) + " | score |"
    rule = "|" + "---|" * (len(DIMENSIONS) + 3)
    for sid, evs in by_sid.items():
        out.append(f"**{sid}**")
        for ev in evs:
            if ev.kind == "reflection":
                if getattr(ev, "calibrated", True):
                    out.append(f"attempt {ev.attempt}: S = **{ev.score:.1f}** → `{ev.decision}`")
                else:
                    out.append(
                        f"attempt {ev.attempt}: S = {ev.score:.1f}, **advisory**: no expert's score separates right "
                        "from wrong here on real photos, so it is shown and never used (the step's checks decide)"
                    )
                out.extend(f"· not voting: {why}  " for why in getattr(ev, "silent", ())[:4])
                out.append("")
                out.append(head)
                out.append(rule)
                for e in ev.experts:
                    cells = " | ".join(_num(e["scores"].get(d)) for d in DIMENSIONS)
                    out.append(f"| {e['name']} | {e['kind']} | {cells} | {_num(e.get('score'))} |")
                notes = [f"− {n}" for e in ev.experts for n in e.get("negative", [])][:4]
                out.append("")
                out.extend(f"{n}  " for n in notes)
                merged = merged_lines(getattr(ev, "merged", None) or {})
                if merged:
                    out.append("")
                    out.append("_Aggregator (merged feedback; it does not score):_  ")
                    out.extend(f"{m}  " for m in merged)
            elif ev.kind == "reflection_retry" and ev.action == "ask_user":
                out.append(f"→ asks you to point at the target (no retry without it): {ev.reason}")
            elif ev.kind == "reflection_retry":
                out.append(f"→ retry as attempt {ev.attempt} by `{ev.action}`: {ev.reason}")
            elif ev.kind == "expert_dropped":
                out.append(f"⚠ expert {ev.expert} dropped: {ev.reason}")
            elif ev.kind == "reflection_kept":
                mark = "accepted" if ev.accepted else "best of attempts"
                out.append(f"**kept attempt {ev.attempt}** ({mark}, S {ev.score:.1f}): {ev.reason}")
            out.append("")
    return "\n".join(out)
