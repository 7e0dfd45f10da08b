"""Real-photo ground-truth suite (issue 18 part 1): costa run as a user would on real photos with known truth.

Each case (`costa.real.cases`: composites of real cut-outs on real photos, cropped photos, blurred photos,
adjustments, real signs read and rewritten, two-step turns) goes through the session core as `costa edit` does
(prepare → run, a throwaway store, the CLI's "do the rest" action, no --accept-unverified). For every subtask the
bench records what costa claimed — verified done, proposed (once the `SubtaskProposed` state exists), unverified,
not done — the turn's exit code and state, and judges the subtask's image against the truth (`costa.real.measures`).
It prints, per kind and tool: the precision of "verified done", the share right among proposals, recall; overall
rates; per reflection expert and dimension the AUC separating right from wrong. `--write` regenerates
`tool_tables/calibration.csv` from the dev part alone (reproducible); `--verdicts [DIR]` adds a home's people's
Accept / Discard verdicts as labelled cases and writes that home's own table (`bench.real_tables`).
`--save DIR` writes a contact sheet per step: before | result | truth, the region outlined.

    python -m costa bench real [--dev | --held-out] [--kinds removal,outpaint] [--n N] [--seed S] [--save DIR]
                               [--write [--verdicts [DIR]] [--out FILE]]
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench import real_tables

#: Suite step kind → the costa subtask kinds that serve it.
STEP_KINDS: dict[str, tuple[str, ...]] = {
    "removal": ("object_removal",),
    "background": ("background_removal", "object_segmentation"),
    "outpaint": ("outpainting",),
    "recolour": ("object_recoloration",),
    "deblur": ("image_deblurring",),
    "adjust": ("global_adjustment",),
    "text": ("text_extraction", "text_detection"),
    "bgblur": ("background_blur",),
    "retext": ("text_replacement",),
}
CLAIMS = ("verified", "proposed", "unverified", "not done")
#: Suite steps that act on a pointed target; the others are whole-image steps (their context's pointing is "none").
_TARGETED = frozenset({"removal", "background", "recolour", "bgblur", "retext"})


@dataclass
class StepRun:
    """One judged subtask of one case."""

    case: str
    part: str
    step: str  # suite kind
    kind: str  # costa subtask kind ("" when the planner made no subtask for it)
    tool: str
    claim: str  # one of CLAIMS
    right: bool
    why: str
    content: str
    region: str
    pointing: str
    experts: dict[tuple[str, str], float] = field(default_factory=dict)  # (expert, dimension) → 0–10
    numbers: dict[str, float] = field(default_factory=dict)
    judged: bool = True  # False: costa's result cannot be seen through the session core (a segmentation's mask)


@dataclass
class CaseRun:
    case: str
    part: str
    kind: str
    exit_code: int
    status: str
    seconds: float
    steps: list[StepRun]
    error: str = ""


def _exit_code(view: Any) -> int:
    """The exit code `costa edit` would give this finished turn (see costa/session/console.py)."""
    done = view.outcome
    if view.question or view.plan is None or not view.plan.subtasks or done is None:
        return 2
    if getattr(view, "status", "") == "proposed":
        return 4
    if done.unverified or view.ask_pointing:
        return 4
    if done.image is None:
        return 2
    return 0 if done.ok else 3


@dataclass
class _Turn:
    """A finished turn as the bench reads it: the view, the claims' sources and each subtask's image before it."""

    view: Any
    code: int
    proposed: dict[str, Any]
    reflections: dict[str, Any]
    unverified: set[str]
    before: dict[str, np.ndarray]
    content: str


def _run_turn(core: Any, built: Any) -> _Turn | str:
    """Run the case's turn through the session core as `costa edit` does; the refusal's message when refused."""
    from costa.calibration import content_class
    from costa.errors import CostaError
    from costa.session.core import Pointing, Upload
    from costa.session.turns import TurnOptions
    from costa.types import Mask

    sid = core.new_session(None).id
    opts = TurnOptions.validate(core.settings, None, None, "lazy", None, action="rest", accept_unverified=False)
    clicks = [built.click] if built.click is not None else []
    box = ",".join(str(v) for v in built.box) if built.box is not None else ""
    brush = Mask(built.brush) if built.brush is not None else None
    events: list[Any] = []
    view = None
    try:
        req = core.prepare(
            sid, None, built.case.instruction, opts, Pointing(clicks, box, brush), Upload(built.image, "real", ())
        )
        for shown, ev in core.run(req):
            view = shown
            if ev is not None:
                events.append(ev)
    except CostaError as e:
        return str(e)
    assert view is not None
    proposed = {ev.subtask_id: ev for ev in events if ev.kind == "subtask_proposed"}
    reflections = {ev.subtask_id: ev for ev in events if ev.kind == "reflection"}  # the last attempt judged
    before: dict[str, np.ndarray] = {}
    current = built.image
    for s in list(view.plan.subtasks) if view.plan is not None else []:  # the image before each, in execution order
        before[s.id] = current
        d = view.done_subtasks.get(s.id) or proposed.get(s.id)
        if d is not None and getattr(d, "image", None) is not None:
            current = d.image
    unverified = set(view.outcome.unverified) if view.outcome is not None else set()
    return _Turn(view, _exit_code(view), proposed, reflections, unverified, before, content_class(built.image))


def run_case(core: Any, built: Any, save: Path | None = None) -> CaseRun:
    """Run one built case through the session core as `costa edit` does and judge each subtask; `save` is a folder
    for contact sheets (None: none)."""
    case = built.case
    t0 = time.perf_counter()
    turn = _run_turn(core, built)
    if isinstance(turn, str):
        refused = [_missing(case, s, built, f"refused: {turn}") for s in built.steps]
        return CaseRun(case.id, case.part, case.kind, 2, "refused", time.perf_counter() - t0, refused, turn)
    order = list(turn.view.plan.subtasks) if turn.view.plan is not None else []
    used: set[str] = set()
    steps: list[StepRun] = []
    for step, truth in zip(built.steps, built.step_truths, strict=True):
        sub = next((s for s in order if s.kind in STEP_KINDS[step] and s.id not in used), None)
        if sub is None:
            steps.append(_missing(case, step, built, "the planner made no subtask for it"))
            continue
        used.add(sub.id)
        steps.append(_judge_subtask(turn, built, step, truth, sub, save))
    return CaseRun(case.id, case.part, case.kind, turn.code, turn.view.status, time.perf_counter() - t0, steps)


def _claim(turn: _Turn, sid: str) -> str:
    if sid in turn.proposed:
        return "proposed"
    if sid in turn.view.done_subtasks and sid not in turn.unverified and turn.code in (0, 3):
        return "verified"  # exit 0, or a partial turn whose done subtasks the user is told are done
    return "unverified" if sid in turn.unverified else "not done"


def _judge_subtask(turn: _Turn, built: Any, step: str, truth: Any, sub: Any, save: Path | None) -> StepRun:
    """Judge one subtask's result against its truth and record its claim, context and experts' scores."""
    from costa.calibration import region_class
    from costa.real.measures import Judgement, judge_background, judge_step

    prop = turn.proposed.get(sub.id)
    got = prop or turn.view.done_subtasks.get(sub.id)
    claim = _claim(turn, sub.id)
    after = getattr(got, "image", None) if got is not None else None
    before = turn.before[sub.id]
    if truth.mask is not None and before.shape[:2] != truth.mask.shape and after is not None:
        # an extension to the right / bottom ran first: the object's truth is the top-left part of the canvas
        h, w = truth.mask.shape
        before, after = before[:h, :w], after[:h, :w]
    proposed_region = getattr(prop, "region", None) if prop is not None else None
    judged = True
    if sub.kind == "object_segmentation":  # its result is a mask: judged from a proposal's region when one came
        if proposed_region is not None:
            verdict = judge_background(truth, before, before, np.asarray(proposed_region, bool))
        else:
            verdict = Judgement(False, "a segmentation's mask is not in the turn's events: not judged")
            judged = claim == "not done"  # nothing claimed is nothing to judge; a claim without its mask is unseen
    else:
        verdict = judge_step(step, truth, before, after, getattr(got, "result", "") if got is not None else "")
    region = proposed_region if proposed_region is not None else (
        truth.mask if step in _TARGETED else None
    )  # fmt: skip
    shape = region.shape if region is not None else before.shape[:2]
    # the user pointed at the turn's target; a whole-image step of the same turn (brighten, extend) was not pointed
    pointing = built.pointing if step in _TARGETED else "none"
    tools = tuple(getattr(got, "tools", ()) or ())
    if save is not None:
        _save(save, built, step, truth, before, after, claim, verdict)
    return StepRun(
        built.case.id, built.case.part, step, sub.kind, tools[-1] if tools else "", claim, verdict.right, verdict.why,
        turn.content, region_class(region, shape), pointing, _experts(turn.reflections.get(sub.id)),
        verdict.numbers, judged,
    )  # fmt: skip


def _experts(refl: Any) -> dict[tuple[str, str], float]:
    """(expert, dimension) → score of the last reflection of a subtask, plus each expert's and the aggregate mean."""
    out: dict[tuple[str, str], float] = {}
    if refl is None:
        return out
    for ex in refl.experts:
        for dim, score in (ex.get("scores") or {}).items():
            if score is not None:
                out[(str(ex.get("name")), str(dim))] = float(score)
        out[(str(ex.get("name")), "mean")] = float(ex.get("score") or 0.0)
    out[("aggregate", "mean")] = float(refl.score)
    return out


def _missing(case: Any, step: str, built: Any, why: str) -> StepRun:
    return StepRun(case.id, case.part, step, "", "", "not done", False, why, "photo", "none", built.pointing)


# ------------------------------------------------------------------------------------------------ contact sheets


def _save(
    folder: Path, built: Any, step: str, truth: Any, before: np.ndarray, after: Any, claim: str, verdict: Any
) -> None:
    from PIL import Image

    from costa.real.sheets import contact_sheet

    label = f"{built.case.id} {claim} {'RIGHT' if verdict.right else 'WRONG'}: {verdict.why}"
    Image.fromarray(contact_sheet(step, truth, before, after, label)).save(folder / f"{built.case.id}-{step}.jpg")


# -------------------------------------------------------------------------------------------------------- report


def auc(scores: Sequence[float], labels: Sequence[bool]) -> float | None:
    """Area under the ROC curve of `scores` separating True from False labels (ties count half); None when one class
    is absent.

    >>> auc([9, 8, 2, 1], [True, True, False, False]), auc([1, 2], [True, False]), auc([5, 5], [True, False])
    (1.0, 0.0, 0.5)
    """
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def _rate(a: int, b: int) -> str:
    return f"{a}/{b} = {a / b:.0%}" if b else f"{a}/0"


def format_report(runs: Sequence[CaseRun], wall: float) -> str:
    """Per kind and tool, overall, per expert: the figures the issue asks for."""
    every = [s for r in runs for s in r.steps]
    steps = [s for s in every if s.judged]
    unseen = [s for s in every if not s.judged]
    out = [f"{len(runs)} real cases, {len(steps)} judged subtasks, wall {wall:.0f} s"]
    if unseen:
        out.append(f"not judged (claimed {', '.join(sorted({s.claim for s in unseen}))}, result not observable): "
                   f"{len(unseen)} ({', '.join(s.case for s in unseen[:8])})")  # fmt: skip
    out.append("")
    head = f"{'kind':11} {'tool':24} {'n':>4} {'verified':>9} {'ver. right':>11} {'prec.':>6} {'proposed':>9} " \
           f"{'prop. right':>11} {'recall':>7} {'right if done':>14}"  # fmt: skip
    out.append(head)
    groups: dict[tuple[str, str], list[StepRun]] = {}
    for s in steps:
        groups.setdefault((s.step, s.tool or "-"), []).append(s)
        groups.setdefault((s.step, "(all)"), []).append(s)
    for (step, tool), group in sorted(groups.items()):
        out.append(_row(step, tool, group))
    out.append(_row("all", "(all)", steps))
    out.append("")
    ver = [s for s in steps if s.claim == "verified"]
    wrong = [s for s in ver if not s.right]
    out.append(
        f"verified done: {_rate(len(ver), len(steps))} of subtasks; wrong among them {_rate(len(wrong), len(ver))} "
        f"(false verified-done); right among all {_rate(sum(s.right for s in ver), len(steps))}"
    )
    prop = [s for s in steps if s.claim == "proposed"]
    out.append(
        f"proposed: {_rate(len(prop), len(steps))}; "
        f"right among proposals {_rate(sum(s.right for s in prop), len(prop))}"
    )
    claims = {c: sum(s.claim == c for s in steps) for c in CLAIMS}
    out.append("claims: " + ", ".join(f"{c} {n}" for c, n in claims.items()))
    codes: dict[int, int] = {}
    for r in runs:
        codes[r.exit_code] = codes.get(r.exit_code, 0) + 1
    out.append("exit codes: " + ", ".join(f"{c}: {n}" for c, n in sorted(codes.items())))
    cases_ok = [r for r in runs if r.exit_code == 0]
    out.append(
        f"cases exit 0: {len(cases_ok)}, "
        f"of which every subtask right: {sum(all(s.right for s in r.steps) for r in cases_ok)}"
    )
    out.append("")
    out.append("reflection experts (done and proposed subtasks): AUC of the score separating right from wrong")
    judged = [s for s in steps if s.experts and s.claim in ("verified", "proposed")]
    keys = sorted({k for s in judged for k in s.experts})
    for key in keys:
        pairs = [(s.experts[key], s.right) for s in judged if key in s.experts]
        a = auc([p[0] for p in pairs], [p[1] for p in pairs])
        shown = "n/a (one class only)" if a is None else f"{a:.2f}"
        out.append(f"  {key[0]:14} {key[1]:22} n={len(pairs):>4} AUC {shown}")
    out.append("  per subtask kind (a dimension votes there only at the bars of tool_tables/reflection_votes.csv):")
    for r in sorted(real_tables.votes_rows(steps), key=lambda r: (r.kind, r.expert, r.dimension)):
        shown = "n/a (one class only)" if r.auc is None else f"{r.auc:.2f}"
        out.append(f"    {r.kind:22} {r.expert:14} {r.dimension:20} n={r.n:>4} right {r.right:>4} AUC {shown}")
    if wrong:
        out.append("")
        out.append("wrong results reported verified done:")
        for s in wrong[:60]:
            out.append(f"  {s.case:28} {s.step:10} {s.tool:22} {s.pointing:6} {s.why}")
    return "\n".join(out)


def _row(step: str, tool: str, group: Sequence[StepRun]) -> str:
    ver = [s for s in group if s.claim == "verified"]
    prop = [s for s in group if s.claim == "proposed"]
    right_ver = sum(s.right for s in ver)
    prec = f"{right_ver / len(ver):.2f}" if ver else "-"
    done = ver + prop
    return (
        f"{step:11} {tool[:24]:24} {len(group):>4} {len(ver):>9} {right_ver:>11} {prec:>6} {len(prop):>9} "
        f"{sum(s.right for s in prop):>11} {right_ver / len(group):>7.2f} "
        f"{_rate(sum(s.right for s in done), len(done)):>14}"
    )


# ------------------------------------------------------------------------------------------------------- runner

HELP = "real-photo ground-truth suite: costa's claims against the truth, precision of 'done', calibration table"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare this benchmark's options."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("--dev", action="store_true", help="only the dev part (the default with --write)")
    g.add_argument("--held-out", action="store_true", help="only the held-out part (never tune on it)")
    p.add_argument("--kinds", default="", help="comma-separated suite kinds: " + ",".join(STEP_KINDS) + ",multi")
    p.add_argument("--n", type=int, default=None, help="at most N cases per kind (drawn by --seed)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--save", default="", help="write a contact sheet per step into this folder")
    real_tables.add_arguments(p)  # --write, --verdicts, --out


def run(args: argparse.Namespace) -> int:
    """Select, build and run the cases, print the report; `--write` the calibration table."""
    from costa.errors import InputError
    from costa.real.cases import KINDS, build_case, select_cases
    from costa.real.photos import benchmarks_dir

    kinds = [k for k in args.kinds.split(",") if k] or None
    for k in kinds or ():
        if k not in KINDS:
            raise InputError(f"--kinds: unknown kind {k!r}; known: {', '.join(KINDS)}")
    if args.n is not None and args.n < 1:
        raise InputError(f"--n must be at least 1, got {args.n}")
    if args.write and args.held_out:
        raise InputError("--write takes the dev part only: the held-out part is never tuned on")
    if (args.out or args.verdicts is not None) and not args.write:
        raise InputError("--verdicts and --out say what --write writes: add --write")
    part = "held_out" if args.held_out else "dev" if (args.dev or args.write) else None
    if benchmarks_dir() is None:
        print("note: ../shared/benchmarks is absent (COSTA_BENCHMARKS_DIR): only scikit-image's photos are used")
    cases = select_cases(part, kinds, args.n, args.seed)
    if not cases:
        print("no real-photo cases available here: skipped")
        return 0
    save = Path(args.save) if args.save else None
    if save is not None:
        save.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="costa-real-") as scratch:
        runs = _run_all(cases, Path(scratch), build_case, save)
    print(format_report(runs, time.perf_counter() - t0))
    if args.write:
        real_tables.write_tables([s for r in runs for s in r.steps if r.part == "dev"], len(runs), args)
    return 0


def _run_all(cases: Sequence[Any], scratch: Path, build: Any, save: Path | None) -> list[CaseRun]:
    from costa.config import Settings
    from costa.services import Services
    from costa.session.core import SessionCore
    from costa.store import Store

    settings = dataclasses.replace(Settings.from_env(), home=scratch)  # learned estimates stay in the throwaway store
    core = SessionCore(Services(settings), Store(scratch))
    runs = []
    try:
        for i, case in enumerate(cases, 1):
            r = run_case(core, build(case), save)
            runs.append(r)
            marks = " ".join(f"{s.step}:{s.claim}:{'right' if s.right else 'WRONG'}" for s in r.steps)
            why = f" ({r.error[:100]})" if r.error else ""
            print(f"[{i}/{len(cases)}] {case.id} exit {r.exit_code} {r.seconds:.1f}s {marks}{why}", flush=True)
    finally:
        core.close()
    return runs
