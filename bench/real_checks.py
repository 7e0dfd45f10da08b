"""How well each check separates right from wrong results on real photos (the real suite's truth, issue 18).

`bench real` runs whole turns; this bench isolates the checks: for every case of the chosen kinds it runs each
ready tool that serves the kind on the case's input, given the truth's region where the kind edits an object (the
grounding is right, so only the edit and its check are measured), asks the subtask's check (`check_step`, as the
search does) and judges the result against the truth (`costa.real.measures`). Per check and tool it prints how many
results passed, how many of those were right (the check's precision on real photos), how many right results it
refused, and the wrong results it passed with the reason the truth gives. `--save DIR` writes before | result |
truth sheets of every result, named by case, tool and verdict (PASS-WRONG sheets first to look at).

    python -m costa bench real_checks [--kinds removal,outpaint,recolour,background,bgblur] [--n N] [--save DIR]
        [--tools ID,ID…] [--pointing truth|box] [--threshold T]

Only the dev part: the held-out part is never looked at while the checks are tuned.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

HELP = "per-check precision on the real suite's dev part: each check's verdict against the truth"

#: Suite kind → (costa subtask kind, instruction kind of its subtask).
KINDS: dict[str, str] = {
    "removal": "object_removal",
    "outpaint": "outpainting",
    "recolour": "object_recoloration",
    "background": "background_removal",
    "bgblur": "background_blur",
}


@dataclass(frozen=True)
class Row:
    case: str
    kind: str
    tool: str
    passed: bool
    right: bool
    quality: float
    why_check: str
    why_truth: str


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kinds", default="removal,outpaint,recolour,background", help="suite kinds, comma-separated")
    p.add_argument("--n", type=int, default=None, help="at most N cases per kind")
    p.add_argument("--tools", default="", help="only these tools (comma-separated ids)")
    p.add_argument(
        "--pointing", choices=("truth", "box"), default="truth", help="the region given: the object's mask or its box"
    )
    p.add_argument("--save", type=Path, default=None, help="write before | result | truth sheets here")
    p.add_argument("--threshold", type=float, default=0.8, help="a check passes at this quality")


def _subtask(built: Any, kind: str) -> Any:
    from costa.planner.rules import plan_with_rules
    from costa.types import Subtask

    plan = plan_with_rules(built.case.instruction)
    for s in plan.subtasks:
        if s.kind == kind:
            return s
    return Subtask(id="s1", kind=kind, target=built.case.obj or None)


def _state(built: Any, kind: str, how: str) -> Any:
    from costa.types import Box, EditState, Mask

    mask = built.truth.mask
    if kind in ("outpainting",) or mask is None:
        return EditState(built.image)
    ys, xs = np.nonzero(mask)
    box = Box(int(xs.min()), int(ys.min()), int(xs.max() - xs.min() + 1), int(ys.max() - ys.min() + 1), "object")
    if built.box is not None:
        x, y, w, h = built.box
        box = Box(x, y, w, h, "user box")
    if how == "box" or kind == "background_removal":
        return EditState(built.image, {"boxes": (box,)})
    return EditState(built.image, {"masks": (Mask(mask, "object"),), "boxes": (box,)})


def _sheet(path: Path, before: np.ndarray, after: np.ndarray, truth: np.ndarray | None) -> None:
    from PIL import Image

    panels = [before, after] + ([truth] if truth is not None else [])
    ims = [Image.fromarray(p) for p in panels]
    for im in ims:
        im.thumbnail((480, 480))
    sheet = Image.new("RGB", (sum(i.width for i in ims) + 8 * (len(ims) - 1), max(i.height for i in ims)), "white")
    x = 0
    for im in ims:
        sheet.paste(im, (x, 0))
        x += im.width + 8
    path.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(path)


def _truth_image(built: Any) -> np.ndarray | None:
    t = built.truth
    for v in (t.background, t.canvas):
        if v is not None:
            return v
    if t.mask is not None:
        out = built.image.copy()
        out[~t.mask] = 255
        return out
    return None


def run_case(built: Any, suite_kind: str, args: argparse.Namespace, services: Any, ctx: Any) -> list[Row]:
    """Every ready tool of the case's kind on the case, its check's verdict and the truth's judgement."""
    from costa.checks import check_step
    from costa.errors import ToolError
    from costa.real.measures import judge_step

    kind = KINDS[suite_kind]
    spec = services.tables.subtasks[kind]
    subtask = _subtask(built, kind)
    wanted = {t for t in args.tools.split(",") if t}
    rows: list[Row] = []
    for tool_spec in services.tables.tools_for(kind):
        if (wanted and tool_spec.id not in wanted) or spec.produces not in tool_spec.outputs:
            continue  # a grounder feeding the edit is not the edit
        before = _state(built, kind, args.pointing)
        if not services.is_ready_fn()(tool_spec.id) or not set(tool_spec.inputs) <= set(before.available()):
            continue
        tool = services.tool(tool_spec.id)
        try:
            output = tool(before, subtask, tool_spec.params_for_attempt(0))
        except ToolError as e:
            rows.append(Row(built.case.id, suite_kind, tool_spec.id, False, False, 0.0, f"tool failed: {e}", ""))
            continue
        after = before.with_output(output)
        verdict = check_step(ctx, spec, subtask, tool_spec.outputs, before, after, output)
        passed = verdict.quality >= args.threshold
        result = output.image if output.image is not None else built.image
        judged = judge_step(suite_kind, built.truth, built.image, result)
        worst = min(verdict.reasons, key=lambda r: 0, default="") if verdict.reasons else ""
        rows.append(
            Row(built.case.id, suite_kind, tool_spec.id, passed, judged.right, verdict.quality, worst, judged.why)
        )
        if args.save is not None:
            tag = ("PASS" if passed else "fail") + "-" + ("right" if judged.right else "WRONG")
            _sheet(args.save / f"{tag}_{built.case.id}_{tool_spec.id}.png", built.image, result, _truth_image(built))
    return rows


def report(rows: list[Row]) -> list[str]:
    by: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for r in rows:
        by[(r.kind, r.tool)].append(r)
    lines = [
        f"{'kind':10} {'tool':22} {'n':>3} {'passed':>6} {'right|pass':>10} {'precision':>9} {'right':>5} "
        f"{'refused right':>13}"
    ]
    for (kind, tool), rs in sorted(by.items()):
        passed = [r for r in rs if r.passed]
        ok = sum(r.right for r in passed)
        precision = f"{ok / len(passed):.0%}" if passed else "–"
        refused = sum(r.right and not r.passed for r in rs)
        lines.append(
            f"{kind:10} {tool:22} {len(rs):3} {len(passed):6} {ok:10} {precision:>9} {sum(r.right for r in rs):5} "
            f"{refused:13}"
        )
    passed = [r for r in rows if r.passed]
    ok = sum(r.right for r in passed)
    lines.append(
        f"overall: {len(rows)} results, {len(passed)} passed, precision "
        + (f"{ok / len(passed):.1%}" if passed else "–")
        + f", right results refused {sum(r.right and not r.passed for r in rows)} of {sum(r.right for r in rows)}"
    )
    wrong = [r for r in rows if r.passed and not r.right]
    if wrong:
        lines.append("wrong results passed (the truth's reason):")
        lines += [f"  {r.case:24} {r.tool:22} q={r.quality:.2f}  {r.why_truth}" for r in wrong]
    return lines


def run(args: argparse.Namespace) -> int:
    from costa.checks import CheckContext
    from costa.real.cases import iter_built
    from costa.services import Services

    services = Services()
    ctx = CheckContext(reader=services.reader)
    kinds = [k for k in args.kinds.split(",") if k]
    for k in kinds:
        if k not in KINDS:
            print(f"unknown kind {k!r}; choose from {', '.join(KINDS)}")
            return 2
    t0 = time.perf_counter()
    rows: list[Row] = []
    for built in iter_built(part="dev", kinds=tuple(kinds), n=args.n):
        rows += run_case(built, built.case.kind, args, services, ctx)
    print(f"real-photo checks: dev part, {len({r.case for r in rows})} cases, {len(rows)} results, pass ≥ "
          f"{args.threshold}, region given: {args.pointing}; {time.perf_counter() - t0:.0f} s")  # fmt: skip
    for line in report(rows):
        print(line)
    return 0
