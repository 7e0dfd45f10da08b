"""Reflection on/off and memory on/off on seeded synthetic data with ground truth, in one run.

Part 1 — the synthetic task suite (`costa.synthetic.tasks`), each task run with reflection off (the search's first
result) and on: false-done rate (turns reported done whose result fails its ground truth), first-try pass (off),
share rescued by reflection retries, overall pass (on), and the cost ratio (the turns' CPU seconds on / off; the wall
seconds, which swing with the machine's other load, are printed too).
Part 2 — multi-turn sessions of 4–6 turns on signs and objects, with references to earlier turns ("do the same to the
word 'X'", "remove it", "use green instead", "make it the same colour", "make it bigger"), run with memory (reference
resolution + earlier regions protected) and without (the raw text, nothing protected): drift of earlier edits (the
share of each earlier turn's accepted region that later turns changed, measured only across local turns that are not
about it — a turn is about a region when it refers to that turn, overlaps it, or refers to a turn that edited the same
target) and references resolved (the planned subtasks are the expected ones).

Part 3 — the verification benchmark's wrong results end to end (`costa.synthetic.cases_checks`, as `bench checks`
builds them): each case becomes a one-subtask turn on its own image, run by the real search with every real tool,
except that the tool the search tries first for the subtask is a FAKE that returns the case's prepared result (a
wrong object recoloured, part of it removed, a near-miss word, mirrored margins, clipping…; or, for the right
cases, the right result). Reflection off and on: how often a wrong result is reported done, how often the turn
routed around it to another tool and finished, and how often a right result was refused.

A proposal (it passed its checks; the real-photo calibration has no evidence for synthetic scenes) is judged like a
done subtask in every part. With the shipped votes table (`tool_tables/reflection_votes.csv`) no expert votes, so
reflection is advisory and "on" differs from "off" only by its cost; `COSTA_REFLECTION_VOTES` names another table.

Last line: `reflection: false-done X% -> Y%, pass A% -> B%, drift C -> D, cost ratio R`.

    python -m costa bench reflection [--tasks 10] [--sessions 20] [--cases 0.1] [--seed 0]
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

HELP = "reflection on/off (false-done, pass, cost) and cross-turn memory on/off (drift, references) on synthetic data"


@dataclass
class SessionTurn:
    text: str
    expected: tuple[tuple[str, str | None, str | None], ...]  # (kind, target, result) the planner should produce
    about: int = 0  # the turn (1-based) this one is about; 0 = none
    reference: bool = False


@dataclass
class Session:
    image: np.ndarray
    turns: list[SessionTurn]
    box: Any = None
    family: str = "sign"


def make_sessions(n: int, seed: int) -> list[Session]:
    """`n` sessions of 4–6 turns: signs (text edits on distinct words, with "do the same", "remove it") and objects
    (recolouring with "use X instead", "the same colour", "make it bigger"), plus a global adjustment now and then."""
    from costa.synthetic.cases import BenchCase
    from costa.synthetic.scenes import NEW_WORDS, make_text_scene, random_object_scene, scene_seeds

    out: list[Session] = []
    colours = ("pink", "teal", "orange", "purple", "yellow", "green", "blue", "red")
    for i, s in enumerate(scene_seeds(n, seed, "reflection-sessions")):
        rng = np.random.default_rng(s)
        size = int(rng.integers(4, 7))
        if i % 2 == 0:
            scene = make_text_scene(int(s), kind="sign")
            words = [w.text for w in scene.words]
            words = [words[k] for k in rng.permutation(len(words))]
            fresh = [NEW_WORDS[k] for k in rng.permutation(len(NEW_WORDS))]
            turns: list[SessionTurn] = []
            while len(turns) < size and words:
                w = words.pop()
                choice = int(rng.integers(3))
                if choice == 0 and words and len(turns) + 2 <= size:
                    w2 = words.pop()
                    turns.append(SessionTurn(f"Highlight the word '{w}'.", (("keyword_highlighting", w, None),)))
                    turns.append(
                        SessionTurn(f"Do the same to the word '{w2}'.", (("keyword_highlighting", w2, None),), 0, True)
                    )
                elif choice == 1 and len(turns) + 2 <= size:
                    turns.append(SessionTurn(f"Highlight the word '{w}'.", (("keyword_highlighting", w, None),)))
                    turns.append(SessionTurn("Remove it.", (("text_removal", w, None),), len(turns), True))
                else:
                    new = fresh.pop()
                    turns.append(SessionTurn(f"Replace the text '{w}' with '{new}'.", (("text_replacement", w, new),)))
            if len(turns) < size:
                turns.append(SessionTurn("Make the image warmer.", (("global_adjustment", None, "warmer"),)))
            out.append(Session(scene.image, turns[:size], None, "sign"))
        else:
            obj = random_object_scene(int(s))
            box = BenchCase(None, obj=obj).user_box()  # type: ignore[arg-type]
            c = [x for x in colours if x != obj.colour_name]
            c = [c[k] for k in rng.permutation(len(c))]
            turns = [SessionTurn(f"Make the object {c[0]}.", (("object_recoloration", "object", c[0]),))]
            turns.append(SessionTurn(f"Use {c[1]} instead.", (("object_recoloration", "object", c[1]),), 1, True))
            turns.append(SessionTurn("Make the image warmer.", (("global_adjustment", None, "warmer"),)))
            turns.append(SessionTurn(f"Make the object {c[2]}.", (("object_recoloration", "object", c[2]),)))
            if size >= 5:
                turns.append(
                    SessionTurn("Make it the same colour.", (("object_recoloration", "object", c[2]),), 4, True)
                )
            if size >= 6:
                turns.append(SessionTurn("Make it bigger.", (), len(turns), True))  # no such subtask: not an upscale
            out.append(Session(obj.image, turns, box, "object"))
    return out


def _plan_matches(plan: Any, expected: tuple[tuple[str, str | None, str | None], ...]) -> bool:
    got = tuple((s.kind, (s.target or "").strip("'\" ").lower() or None, s.result) for s in plan.subtasks)
    want = tuple((k, (t or "").lower() or None, r) for k, t, r in expected)
    return got == want


@dataclass
class SessionResult:
    drift: list[float] = field(default_factory=list)
    references: int = 0
    resolved: int = 0
    seconds: float = 0.0


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    return float((a & b).sum()) / max(1.0, float((a | b).sum()))


def run_session(services: Any, session: Session, memory_on: bool) -> SessionResult:
    from costa.agent import TurnEnv, run_turn
    from costa.errors import CostaError
    from costa.events import Reflection, SubtaskDone, SubtaskProposed, TurnDone
    from costa.planner import plan_with_rules
    from costa.reflect.memory import SessionMemory, record_turn
    from costa.turn.records import UserRegion
    from costa.vlm import GLOBAL_KINDS

    res = SessionResult()
    memory = SessionMemory()
    image = session.image
    regions: list[tuple[int, np.ndarray, np.ndarray]] = []  # (turn, region, image right after that turn)
    edited: dict[int, np.ndarray] = {}  # turn -> the region it changed
    t0 = time.perf_counter()
    for k, turn in enumerate(session.turns, start=1):
        text, box = turn.text, session.box
        if memory_on:
            r = memory.resolve(turn.text)
            text, box = r.text, (r.box or session.box)
        try:
            plan = plan_with_rules(text, services.tables.subtasks)
        except CostaError:
            plan = None
        if turn.reference:
            res.references += 1
            res.resolved += int(plan is not None and _plan_matches(plan, turn.expected))
        if plan is None or not plan.subtasks:
            continue
        region = UserRegion(boxes=(box,)) if box is not None else None
        images: list[tuple[str, np.ndarray]] = []
        feedback: list[str] = []
        done: TurnDone | None = None
        try:
            for ev in run_turn(services, image, plan, region=region, env=TurnEnv(memory=memory if memory_on else None)):
                if isinstance(ev, SubtaskDone | SubtaskProposed) and ev.image is not None:
                    images.append((ev.subtask_id, ev.image))
                elif isinstance(ev, Reflection) and ev.decision != "accept":
                    feedback.extend(n for e in ev.experts for n in e["negative"])
                elif isinstance(ev, TurnDone):
                    done = ev
        except CostaError:
            continue
        if done is None or done.image is None:
            continue
        new = done.image
        is_global = any(s.kind in GLOBAL_KINDS for s in plan.subtasks)
        if new.shape != image.shape:
            regions = []  # a resize moves every earlier region; nothing left to compare pixel for pixel
        elif is_global:
            regions = [(t, m, new) for t, m, _ in regions]  # about everything: new references
        else:
            changed = np.abs(new.astype(np.int16) - image.astype(np.int16)).max(axis=2) > 12
            # The region of the turn this one refers to: a turn about it is about every earlier edit of the same
            # target too ("make it the same colour" after three recolourings of one object is about all three).
            about = edited.get(turn.about)
            kept = []
            for t, m, ref in regions:
                same_target = about is not None and _iou(m, about) >= 0.3
                if turn.about == t or _iou(m, changed) >= 0.3 or same_target:  # about that region: may change it
                    kept.append((t, m, new))
                else:
                    kept.append((t, m, ref))
            regions = kept
            if changed.any():
                regions.append((k, changed, new))
                edited[k] = changed
        rec = record_turn(k, turn.text, text, plan, image, images, feedback, box)
        memory.add(rec)
        image = new
    last = len(session.turns)
    for t, m, ref in regions:
        if t != last and ref.shape == image.shape and m.any():
            moved = np.abs(image.astype(np.int16) - ref.astype(np.int16)).max(axis=2) > 12
            res.drift.append(float(moved[m].mean()))
    res.seconds = time.perf_counter() - t0
    return res


def run_reflection_bench(n_tasks: int = 10, n_sessions: int = 20, seed: int = 0, cases: float = 0.1) -> str:
    from bench.tasks import run_task
    from costa.services import Services
    from costa.synthetic.tasks import make_tasks

    t_all = time.perf_counter()
    base = Services()
    on = Services(dataclasses.replace(base.settings, reflect=True), base.tables)
    off = Services(dataclasses.replace(base.settings, reflect=False), base.tables)
    lines = [f"part 1: {n_tasks} synthetic tasks (seed {seed}), reflection off vs on", ""]
    lines.append(
        f"{'task':>4} {'family':8} {'off ok/gt':>9} {'on ok/gt':>9} {'retries':>7} {'s off':>7} {'s on':>7} "
        f"{'cpu off':>7} {'cpu on':>7}"
    )
    rows = []
    tasks = make_tasks(n_tasks, seed)
    for services in (off, on):  # warm-up, not measured: the first turn pays the OCR model load and the caches
        run_task(services, tasks[0])
    for i, task in enumerate(tasks):
        # Alternate which runs first, so neither pays every first-call cost (OCR model load, font and glyph caches).
        if i % 2:
            r_on = run_task(on, task)
            r_off = run_task(off, task)
        else:
            r_off = run_task(off, task)
            r_on = run_task(on, task)
        rows.append((r_off, r_on))
        lines.append(
            f"{task.index:>4} {task.family:8} {int(r_off.reported_done)}/{int(r_off.success):<7} "
            f"{int(r_on.reported_done)}/{int(r_on.success):<7} {r_on.retries:>7} "
            f"{r_off.seconds:7.2f} {r_on.seconds:7.2f} {r_off.turn_cpu_seconds:7.2f} {r_on.turn_cpu_seconds:7.2f}"
        )
    n = max(1, len(rows))
    fd_off = sum(a.reported_done and not a.success for a, _ in rows) / n
    fd_on = sum(b.reported_done and not b.success for _, b in rows) / n
    first = sum(a.success for a, _ in rows) / n
    overall = sum(b.success for _, b in rows) / n
    rescued = sum((not a.success) and b.success and b.retries > 0 for a, b in rows) / n
    undone = sum(a.success and not b.success for a, b in rows) / n
    # The cost ratio is the turns' own CPU seconds (this process, all threads): wall seconds on a shared machine
    # swing with other load, and both include the same planning and ground-truth verification.
    cost = sum(b.turn_cpu_seconds for _, b in rows) / max(1e-9, sum(a.turn_cpu_seconds for a, _ in rows))
    wall = sum(b.seconds for _, b in rows) / max(1e-9, sum(a.seconds for a, _ in rows))
    lines += [
        "",
        f"false-done (reported done, ground truth fails): off {fd_off:.0%}, on {fd_on:.0%}",
        f"first-try pass (off) {first:.0%}; rescued by retries {rescued:.0%}; overall pass (on) {overall:.0%}; "
        f"passed off but not on {undone:.0%}",
        f"cost ratio (turn CPU seconds on / off): {cost:.2f}; wall seconds with verification on / off: {wall:.2f}",
        "",
    ]
    sessions = make_sessions(n_sessions, seed)
    n_turns = sum(len(s.turns) for s in sessions)
    lines.append(f"part 2: {len(sessions)} sessions, {n_turns} turns (4–6 each), memory off vs on (reflection on)")
    results = {flag: [run_session(on, s, flag) for s in sessions] for flag in (False, True)}

    def drift(flag: bool) -> float:
        values = [d for r in results[flag] for d in r.drift]
        return float(np.mean(values)) if values else 0.0

    def refs(flag: bool) -> tuple[int, int]:
        return sum(r.resolved for r in results[flag]), sum(r.references for r in results[flag])

    (ro, no), (rn, nn) = refs(False), refs(True)
    regions = sum(len(r.drift) for r in results[True])
    lines += [
        f"drift of earlier edits (share of an earlier region changed by later turns not about it, {regions} regions):"
        f" without memory {drift(False):.3f}, with memory {drift(True):.3f}",
        f"references resolved: without memory {ro}/{no}, with memory {rn}/{nn}",
        f"session seconds: without memory {sum(r.seconds for r in results[False]):.1f}, "
        f"with memory {sum(r.seconds for r in results[True]):.1f}",
        "",
    ]
    if cases > 0:
        part3, _ = run_cases_part(on, off, cases, seed)
        lines += [*part3, ""]
    lines += [
        f"wall time {time.perf_counter() - t_all:.1f} s",
        "",
        f"reflection: false-done {fd_off:.0%} -> {fd_on:.0%}, pass {first:.0%} -> {overall:.0%}, "
        f"drift {drift(False):.3f} -> {drift(True):.3f}, cost ratio {cost:.2f}",
    ]
    return "\n".join(lines)


class _PreparedResult:
    """FAKE tool (a stand-in at the tool boundary, not a real tool): returns one prepared step result whatever it is
    given, as a broken or misled tool would, under the real tool's spec."""

    def __init__(self, spec: Any, output: Any) -> None:
        self.spec, self.output, self.settings, self.calls = spec, output, None, 0

    def missing(self) -> str | None:
        return None

    def ensure_loaded(self) -> None:
        return None

    def __call__(self, state: Any, subtask: Any, params: Any) -> Any:
        self.calls += 1
        return self.output


@dataclass
class CaseRun:
    """One check case run as a turn: the tool the fake stood in for and how the turn ended."""

    name: str
    correct: bool
    fake: str
    outcome: str  # "done with it" (the prepared result was accepted), "done by another path", "not done"
    retries: int = 0


def _first_final_tool(services: Any, image: np.ndarray, plan: Any) -> str | None:
    """The tool the search runs first for the plan's one subtask's goal (a real run, reflection off)."""
    from costa.agent import run_turn
    from costa.errors import CostaError
    from costa.events import ToolFinished
    from costa.turn.records import TurnConfig

    goal = services.tables.subtasks[plan.subtasks[0].kind].produces
    try:
        for ev in run_turn(services, image, plan, TurnConfig(reflect=False)):
            if isinstance(ev, ToolFinished) and goal in services.tables.tools[ev.tool].outputs:
                return str(ev.tool)
    except CostaError:
        return None
    return None


def run_case(services: Any, case: Any, fake_tool: str, reflect: bool) -> CaseRun:
    """Run `case` as a turn in which `fake_tool` returns the case's prepared result (see the module docstring)."""
    from costa.agent import run_turn
    from costa.errors import CostaError
    from costa.events import ReflectionKept, SubtaskDone, SubtaskProposed, TurnDone
    from costa.turn.records import TurnConfig
    from costa.types import Plan

    plan = Plan(subtasks=(case.subtask,))
    fake = _PreparedResult(services.tables.tools[fake_tool], case.output)
    real = services._tools.get(fake_tool)
    services._tools[fake_tool] = fake  # the FAKE replaces the real tool for this one turn
    done: SubtaskDone | SubtaskProposed | None = None
    turn: TurnDone | None = None
    retries = 0
    rejected = False  # reflection kept a best attempt below its threshold
    try:
        for ev in run_turn(services, case.before.image, plan, TurnConfig(reflect=reflect)):
            if ev.kind == "reflection_retry":
                retries += 1
            elif isinstance(ev, ReflectionKept):
                rejected = rejected or not ev.accepted
            elif isinstance(ev, SubtaskDone | SubtaskProposed):  # a proposal passed its checks too: judged as done
                done = ev
            elif isinstance(ev, TurnDone):
                turn = ev
    except CostaError:
        turn = None
    finally:
        if real is not None:
            services._tools[fake_tool] = real
        else:
            services._tools.pop(fake_tool, None)
    # claimed: done, or held back only because the real-photo calibration cannot vouch for synthetic scenes
    claimed = turn is not None and (turn.ok or (bool(turn.proposed) and not (turn.skipped or turn.unverified)))
    if not claimed or rejected or done is None:
        outcome = "not done"
    elif done.tools and done.tools[-1] == fake_tool:
        outcome = "done with it"
    else:
        outcome = "done by another path"
    return CaseRun(case.name, case.correct, fake_tool, outcome, retries)


def run_cases_part(on: Any, off: Any, scale: float, seed: int) -> tuple[list[str], dict[bool, list[CaseRun]]]:
    """Part 3: every image-editing check case at `scale`, reflection off and on; report lines and the runs."""
    from costa.synthetic.cases_checks import make_check_cases
    from costa.types import Plan

    cases = [c for c in make_check_cases(seed, scale) if on.tables.subtasks[c.kind].edits_image]
    runs: dict[bool, list[CaseRun]] = {False: [], True: []}
    skipped = 0
    for case in cases:
        first = _first_final_tool(off, case.before.image, Plan(subtasks=(case.subtask,)))
        if first is None:  # nothing reaches the subtask's goal here (the target cannot be grounded): no first choice
            skipped += 1
            continue
        for flag, services in ((False, off), (True, on)):
            runs[flag].append(run_case(services, case, first, flag))
    lines = [
        f"part 3: {len(cases)} check cases end to end ({sum(not c.correct for c in cases)} wrong results, "
        f"{sum(c.correct for c in cases)} right; scale {scale:g}, seed {seed}); the search's first tool for the "
        f"subtask returns the prepared result (FAKE); {skipped} skipped (no tool reaches the goal without it)",
        "",
        f"{'reflection':10} {'wrong: done with it':>20} {'routed around':>14} {'not done':>9} "
        f"{'right: done with it':>20} {'refused':>8} {'retries':>8}",
    ]
    for flag in (False, True):
        w = [r for r in runs[flag] if not r.correct]
        g = [r for r in runs[flag] if r.correct]
        lines.append(
            f"{'on' if flag else 'off':10} {_share(w, 'done with it'):>20} {_share(w, 'done by another path'):>14} "
            f"{_share(w, 'not done'):>9} {_share(g, 'done with it'):>20} {_share(g, 'not done'):>8} "
            f"{sum(r.retries for r in runs[flag]):>8}"
        )
    bad = [r for r in runs[True] + runs[False] if not r.correct and r.outcome == "done with it"]
    if bad:
        lines.append("wrong results reported done: " + ", ".join(f"{r.name} ({r.fake})" for r in bad))
    return lines, runs


def _share(runs: list[CaseRun], outcome: str) -> str:
    n = sum(r.outcome == outcome for r in runs)
    return f"{n}/{len(runs)}"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tasks", type=int, default=10, help="synthetic tasks run with reflection off and on")
    p.add_argument("--sessions", type=int, default=20, help="multi-turn sessions run with memory off and on")
    p.add_argument("--cases", type=float, default=0.1, help="scale of part 3's check cases (1.0: all 440; 0: skip)")
    p.add_argument("--seed", type=int, default=0)


def run(args: argparse.Namespace) -> int:
    from costa.errors import InputError

    if args.tasks < 1 or args.sessions < 1:
        raise InputError("--tasks and --sessions must be at least 1")
    if not 0.0 <= args.cases <= 1.0:
        raise InputError(f"--cases must be in [0, 1], got {args.cases}")
    print(run_reflection_bench(args.tasks, args.sessions, args.seed, args.cases))
    return 0
