"""`campaign report`: the papers' tables from a campaign's scores, as JSON, text and a cost–quality plot.

JSON keys (`build_report`):

- `conditions`: one entry per condition with `condition` (the options it sets), `n_items` (its items with at least
  one scored subtask: the figures are over these), `task_accuracy` (mean over those items of the mean human score of
  their subtasks: CoSTA*'s human evaluation), `subtask_accuracy` (category → mean human score of its subtasks),
  `tool_seconds_per_task` and `turn_seconds_per_task` (mean seconds per item: the tools' seconds, and each turn's
  wall time with planning, search and checks).
- `agreement`: `krippendorff_alpha_interval`, `pairwise_cohen_kappa` (weighted by shared units) and `pairs`
  (see `costa.campaign.stats`).
- `costa_vs_humans`: how often costa's own verdict agreed with the evaluators' mean, per subtask kind — costa
  vouches for a subtask only when its verdict is "done"; the evaluators call it right when their mean score is at
  least `right_at` (0.8). `false_done` counts subtasks costa called done that the evaluators did not call right.

The plot: tool seconds per task (log axis) against human task accuracy, one point per condition, the Pareto
frontier (no other condition both cheaper and better) drawn through the points on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from costa.campaign.records import Campaign, Item, Unit
from costa.campaign.stats import RIGHT_AT, ScoreRow, agreement, item_accuracy, mean, unit_means


@dataclass(frozen=True)
class CampaignData:
    """Everything a report reads, loaded once."""

    campaign: Campaign
    items: Sequence[Item]
    units: Sequence[Unit]
    scores: Sequence[ScoreRow]


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def condition_rows(data: CampaignData) -> list[dict[str, Any]]:
    means = unit_means(data.scores)
    per_item = item_accuracy(means)
    units = {(u.item_id, u.unit): u for u in data.units}
    rows = []
    for c in data.campaign.conditions:
        label = c.label
        items = [i for i in data.items if i.condition.label == label and i.status == "done" and i.id in per_item]
        ids = {i.id for i in items}
        by_category: dict[str, list[float]] = {}
        for key, m in means.items():
            if key[0] in ids and key in units:
                by_category.setdefault(units[key].category, []).append(m)
        rows.append(
            {
                "condition": c.as_dict(),
                "n_items": len(items),
                "task_accuracy": _r(mean(per_item[i] for i in ids)),
                "subtask_accuracy": {k: _r(mean(v)) for k, v in sorted(by_category.items())},
                "tool_seconds_per_task": _r(mean(i.tool_seconds or 0.0 for i in items)),
                "turn_seconds_per_task": _r(mean(i.turn_seconds or 0.0 for i in items)),
            }
        )
    return rows


def costa_vs_humans(data: CampaignData) -> dict[str, Any]:
    """Per kind: subtasks scored, how often costa's verdict matched the evaluators', costa's done that were wrong."""
    means = unit_means(data.scores)
    per_kind: dict[str, dict[str, int]] = {}
    for u in data.units:
        m = means.get((u.item_id, u.unit))
        if m is None:
            continue
        vouched, right = u.verdict == "done", m >= RIGHT_AT
        k = per_kind.setdefault(u.kind, {"n": 0, "agreed": 0, "costa_done": 0, "humans_right": 0, "false_done": 0})
        k["n"] += 1
        k["agreed"] += int(vouched == right)
        k["costa_done"] += int(vouched)
        k["humans_right"] += int(right)
        k["false_done"] += int(vouched and not right)
    out = {kind: {**v, "agreement": _r(v["agreed"] / v["n"])} for kind, v in sorted(per_kind.items())}
    total = {key: sum(v[key] for v in per_kind.values()) for key in ("n", "agreed", "costa_done", "false_done")}
    overall = _r(total["agreed"] / total["n"]) if total["n"] else None
    return {"right_at": RIGHT_AT, "per_kind": out, "overall": {**total, "agreement": overall}}


def build_report(data: CampaignData) -> dict[str, Any]:
    """The report as JSON-ready data (keys in the module docstring)."""
    return {
        "conditions": condition_rows(data),
        "agreement": agreement(data.scores).as_dict(),
        "costa_vs_humans": costa_vs_humans(data),
    }


def pareto(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point beats on both cost (lower) and quality (higher), cheapest first.

    >>> pareto([(1.0, 0.5), (2.0, 0.9), (3.0, 0.6), (0.5, 0.2)])
    [3, 0, 1]
    """
    order = sorted(range(len(points)), key=lambda i: (points[i][0], -points[i][1]))
    front, best = [], float("-inf")
    for i in order:
        if points[i][1] > best:
            front.append(i)
            best = points[i][1]
    return front


def cost_ticks(costs: list[float]) -> list[float]:
    """The x ticks of the cost plot: the conditions' own costs (seconds per task) to 2 significant digits, leaving
    out one within a factor 1.2 of the previous (it would print over it). A log axis whose points lie within one
    decade has no labelled tick of its own (seen: a campaign at 0.25–0.41 s showed none)."""
    ticks: list[float] = []
    for v in sorted({float(f"{c:.2g}") for c in costs if c > 0}):
        if not ticks or v / ticks[-1] > 1.2:
            ticks.append(v)
    return ticks


def plot(report: dict[str, Any], path: Path | BinaryIO, title: str = "") -> None:
    """Draw tool seconds per task vs human task accuracy per condition with the Pareto frontier; write a PNG to
    `path` (a file name or a binary stream)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, NullFormatter

    from costa.campaign.conditions import Condition

    rows = [r for r in report["conditions"] if r["task_accuracy"] is not None]
    fig = Figure(figsize=(7, 4.6), dpi=110)
    ax = fig.add_subplot()
    if rows:
        pts = [(max(r["tool_seconds_per_task"] or 0.0, 1e-3), r["task_accuracy"]) for r in rows]
        front = pareto(pts)
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=46, color="#4a6fa5", zorder=3)
        ax.plot([pts[i][0] for i in front], [pts[i][1] for i in front], "--", color="#c0504d", zorder=2,
                label="Pareto frontier (cheaper and better)")  # fmt: skip
        ax.set_xscale("log")
        lo, hi = min(p[0] for p in pts), max(p[0] for p in pts)
        ax.set_xlim(lo / 1.8, hi * 1.8)  # room for the labels; at least a factor 3 wide
        mid = (lo * hi) ** 0.5
        placed: list[tuple[float, float]] = []
        for p, r in sorted(zip(pts, rows, strict=True), key=lambda pr: pr[0]):
            label = Condition.from_dict(r["condition"]).label
            # conditions that score about the same: stack their labels (a line each) instead of overprinting them
            near = sum(1 for q in placed if abs(p[1] - q[1]) < 0.06)
            placed.append(p)
            right = p[0] > mid  # labels of the right-hand points go to their left, inside the axes
            ax.annotate(f"{label} (n={r['n_items']})", p, textcoords="offset points", fontsize=8,
                        xytext=(-6 if right else 6, 5 + 11 * near), ha="right" if right else "left")  # fmt: skip
        # ticks at the conditions' own costs, plain ("0.25", "12"): within one decade a log axis has no labelled
        # tick at all, and the default log labels go through mathtext, the slowest part of a plot
        ax.set_xticks(cost_ticks([p[0] for p in pts]))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.legend(loc="best", fontsize=8)
    else:
        ax.text(0.5, 0.5, "no scores yet", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("tool seconds per task (log)")
    ax.set_ylabel("human task accuracy")
    ax.set_ylim(-0.03, 1.05)
    ax.grid(alpha=0.3)
    ax.set_title(title or "cost vs human-scored quality per condition", fontsize=10)
    fig.subplots_adjust(left=0.1, right=0.97, bottom=0.12, top=0.92)
    fig.savefig(path, format="png")


def format_report(report: dict[str, Any], name: str) -> list[str]:
    """The report as lines of text (the tables the papers print)."""
    from costa.campaign.conditions import Condition

    lines = [f"campaign {name}"]
    lines.append(f"  {'condition':34} {'items':>5} {'task acc':>8} {'tool s/task':>11} {'turn s/task':>11}")
    for r in report["conditions"]:
        acc = "–" if r["task_accuracy"] is None else f"{r['task_accuracy']:.3f}"
        tool = "–" if r["tool_seconds_per_task"] is None else f"{r['tool_seconds_per_task']:.2f}"
        turn = "–" if r["turn_seconds_per_task"] is None else f"{r['turn_seconds_per_task']:.2f}"
        label = Condition.from_dict(r["condition"]).label
        lines.append(f"  {label:34} {r['n_items']:>5} {acc:>8} {tool:>11} {turn:>11}")
    categories = sorted({k for r in report["conditions"] for k in r["subtask_accuracy"]})
    if categories:
        lines.append("subtask accuracy by category (per condition, in the order above):")
        for cat in categories:
            vals = [r["subtask_accuracy"].get(cat) for r in report["conditions"]]
            lines.append(f"  {cat:28} " + "  ".join("  –  " if v is None else f"{v:.3f}" for v in vals))
    a = report["agreement"]
    alpha = "–" if a["krippendorff_alpha_interval"] is None else f"{a['krippendorff_alpha_interval']:.3f}"
    kappa = "–" if a["pairwise_cohen_kappa"] is None else f"{a['pairwise_cohen_kappa']:.3f}"
    lines.append(f"agreement: Krippendorff's alpha (interval) {alpha}, pairwise Cohen's kappa (linear) {kappa}")
    for p in a["pairs"]:
        k = "–" if p["kappa"] is None else f"{p['kappa']:.3f}"
        lines.append(f"  {' & '.join(p['evaluators'])}: kappa {k} over {p['n']} subtasks")
    cv = report["costa_vs_humans"]
    o = cv["overall"]
    if o["n"]:
        lines.append(
            f"costa vs humans (right = mean score >= {cv['right_at']}): agreed on {o['agreed']}/{o['n']} subtasks; "
            f"costa said done {o['costa_done']}, of which humans called {o['false_done']} wrong"
        )
        for kind, v in cv["per_kind"].items():
            lines.append(f"  {kind:28} agreed {v['agreed']}/{v['n']}, done {v['costa_done']}, "
                         f"humans right {v['humans_right']}, false done {v['false_done']}")  # fmt: skip
    return lines
