"""A turn's tool runs with and without the turn's memo of tool runs (issue 19 item 3), on real photos, in every mode.

Within one turn the same step meets the same input again: reflection's retry re-searches a subtask from the image
the first search started on (its grounder already ran there), the fast–slow fallback searches again from where a
rule failed, the whole-plan search reaches a step after another ordering. The memo (`costa.turn.memo`) replays such
a run at 0 s. This benchmark runs the same turns twice per search mode — with the memo, and with a memo that
remembers nothing (`ForgetfulMemo`, this file) — on real-photo cases of the real suite (`costa.real.cases`, the dev
part; scikit-image's and the shared benchmarks' photos), and prints per case and mode the tool executions,
tool-seconds, memo replays, reflection retries and wall seconds, the ratios, and whether both runs ended alike
(the same outcome and the same final pixels: a replay must change nothing but the cost).

Reflection retries are FORCED here. On the real-photo votes (`tool_tables/reflection_votes.csv`) no expert
dimension separates right from wrong results of any kind, so reflection is advisory and never retries; to measure a
reflection-retry turn this benchmark writes its own protocol with τ_sr = 10 (only a perfect score accepts) and a
votes table in which every dimension votes, both marked FORCED in their notes, into its scratch folder. Every turn
uses a fresh `Services` and a fresh fast–slow runtime (nothing learned by one run steers the next) and accepts the
unverified candidates and proposals (`accept_unverified`), so both runs go to the end and leave an image to compare.
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from costa.turn.executor import StepExecutor
from costa.turn.memo import MemoEntry, RunMemo
from costa.turn.records import MODES as TURN_MODES

HELP = "a turn's tool runs with and without the turn's memo (forced reflection retries, real photos, every mode)"
#: Real-suite kinds whose cases this benchmark runs (one dev case each by default), and the modes it runs them in.
KINDS: tuple[str, ...] = ("recolour", "removal", "bgblur", "adjust")
MODES: tuple[str, ...] = tuple(TURN_MODES)
FORCED_NOTE = "FORCED by bench/memo.py: every dimension votes everywhere, to make reflection retry; not evidence."


@dataclass
class ForgetfulMemo(RunMemo):
    """A memo that remembers nothing: every run runs (the baseline of this benchmark, never used by costa)."""

    def put(self, key: Any, entry: MemoEntry) -> None:
        return None


@dataclass
class UnmemoisedExecutor(StepExecutor):
    """The turn's step executor with the forgetful memo."""

    memo: RunMemo = field(default_factory=ForgetfulMemo)


@dataclass(frozen=True)
class TurnRun:
    """One turn: its tool executions (real runs), tool-seconds, memo replays, reflection retries, wall seconds, and
    what it ended with (`outcome`: done / proposed / unverified ids; `pixels`: a hash of the final image; `paths`:
    each subtask's tools)."""

    case: str
    kind: str
    mode: str
    memo: bool
    executions: int
    tool_seconds: float
    replays: int
    retries: int
    wall_seconds: float
    outcome: str
    pixels: str
    paths: str


def forced_reflection(folder: Path) -> tuple[Path, Path]:
    """Write the FORCED protocol (τ_sr = 10) and votes table (every dimension votes) into `folder`."""
    from costa.reflect.protocol import DIMENSIONS, load_protocol
    from costa.reflect.votes import VoteRow, format_votes
    from costa.tables import load_tables

    root = Path(__file__).resolve().parents[1]
    data = yaml.safe_load((root / "tool_tables" / "reflection.yaml").read_text(encoding="utf-8"))
    data["tau_sr"] = 10.0
    folder.mkdir(parents=True, exist_ok=True)
    protocol = folder / "reflection.yaml"
    protocol.write_text(yaml.safe_dump(data), encoding="utf-8")
    shipped = load_protocol()
    experts = [(e.name, e.judges) for e in shipped.offline] + [(r.name, DIMENSIONS) for r in shipped.vlm_roles]
    kinds = sorted(load_tables().subtasks)
    rows = [VoteRow(n, d, k, 100, 50, 1.0, "fake") for n, dims in experts for d in dims for k in kinds]
    votes = folder / "reflection_votes.csv"
    votes.write_text(format_votes(0.75, 8, rows, FORCED_NOTE), encoding="utf-8")
    return protocol, votes


def run_one(built: Any, mode: str, memo: bool, scratch: Path, alpha: float = 1.0) -> TurnRun:
    """Run `built` (a real-suite case) once in `mode`, with or without the memo, in a fresh home under `scratch`."""
    from costa.agent import TurnEnv, run_turn
    from costa.config import Settings
    from costa.events import ReflectionRetry, SubtaskDone, ToolFinished, TurnDone
    from costa.planner.rules import plan_with_rules
    from costa.pointing import region_from_pointing
    from costa.services import Services
    from costa.store import Store
    from costa.subroutines.runtime import FastSlowRuntime
    from costa.turn.records import TurnConfig
    from costa.types import Mask

    home = Path(tempfile.mkdtemp(prefix=f"{mode}-{'memo' if memo else 'none'}-", dir=scratch))
    protocol, votes = forced_reflection(scratch / "forced")
    settings = replace(Settings.from_env(), home=home, reflection_table=protocol, reflection_votes=votes)
    services = Services(settings)
    executor = StepExecutor if memo else UnmemoisedExecutor
    runtime = FastSlowRuntime.from_services(services, Store(home / "store"), induce=False)
    runtime.executor_class = executor
    clicks = [built.click] if built.click is not None else []
    box = ",".join(str(v) for v in built.box) if built.box is not None else ""
    brush = Mask(built.brush) if built.brush is not None else None
    region = region_from_pointing(built.image, clicks, box, brush)
    plan = plan_with_rules(built.case.instruction, services.tables.subtasks)
    config = TurnConfig(alpha=alpha, mode=mode, reflect=True, accept_unverified=True)
    env = TurnEnv(runtime=runtime, executor_class=executor)
    t0 = time.perf_counter()
    events = list(run_turn(services, built.image, plan, config, region, env=env))
    wall = time.perf_counter() - t0
    done = events[-1]
    assert isinstance(done, TurnDone)
    finished = [e for e in events if isinstance(e, ToolFinished)]
    retries = sum(1 for e in events if isinstance(e, ReflectionRetry))
    outcome = f"ok={done.ok} proposed={sorted(done.proposed)} unverified={sorted(done.unverified)}"
    pixels = "none" if done.image is None else hashlib.blake2b(done.image.tobytes(), digest_size=8).hexdigest()
    replays = sum(1 for e in finished if e.cached)
    paths = "; ".join(f"{e.subtask_id}: {'→'.join(e.tools)}" for e in events if isinstance(e, SubtaskDone))
    return TurnRun(built.case.id, built.case.kind, mode, memo, done.executions, done.tool_seconds, replays, retries,
                   wall, outcome, pixels, paths)  # fmt: skip


def chosen_cases(kinds: Sequence[str], n: int, seed: int, ids: Sequence[str] = ()) -> list[Any]:
    """The dev cases to run, built: those named by `ids`, else `n` per kind drawn by `seed`.

    Raises:
        InputError: an id that is not a dev case whose photos are here.
    """
    from costa.errors import InputError
    from costa.real.cases import build_case, select_cases

    pool = select_cases("dev", None if ids else kinds, None if ids else n, seed)
    if ids:
        known = {c.id: c for c in pool}
        missing = [i for i in ids if i not in known]
        if missing:
            raise InputError(f"not a dev case of the real suite whose photos are here: {', '.join(missing)}")
        pool = [known[i] for i in ids]
    return [build_case(c) for c in pool]


def run_memo_bench(cases: Sequence[Any], modes: Sequence[str] = MODES, scratch: Path | None = None) -> list[TurnRun]:
    """Every (built case, mode) with the memo and without it, the two runs back to back (same machine load)."""
    folder = Path(scratch or tempfile.mkdtemp(prefix="costa-bench-memo-"))
    return [run_one(built, mode, memo, folder) for built in cases for mode in modes for memo in (True, False)]


def _same(a: TurnRun, b: TurnRun) -> str:
    """yes: the same outcome and pixels; otherwise what differed (another path is the search's choice on measured
    seconds, which vary from run to run; the same path with other pixels would be a replay that changed a result)."""
    if (a.outcome, a.pixels) == (b.outcome, b.pixels):
        return "yes"
    if a.paths != b.paths:
        return f"no: another path ({a.paths} | {b.paths})"
    return f"NO: the same path, other pixels or outcome ({a.outcome} | {b.outcome})"


def paired(runs: Sequence[TurnRun]) -> list[tuple[TurnRun, TurnRun]]:
    """(with the memo, without it) for each case and mode."""
    return [(a, b) for a in runs if a.memo for b in runs if not b.memo and (b.case, b.mode) == (a.case, a.mode)]


def broken_pairs(runs: Sequence[TurnRun]) -> list[tuple[TurnRun, TurnRun]]:
    """The pairs that took the same path to another result: a replay changed more than the cost (a bug)."""
    return [(a, b) for a, b in paired(runs) if _same(a, b).startswith("NO")]


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}×" if b else "n/a"


def format_report(runs: Sequence[TurnRun]) -> str:
    """One line per (case, mode): with memo → without, and the totals."""
    out = [
        "memo: forced reflection retries (τ_sr = 10, every dimension votes: FORCED, see bench/memo.py), real photos",
        f"{'case':24} {'mode':9} {'exec with/without':>18} {'tool-s with/without':>22} {'replays':>7} "
        f"{'retries':>9} {'wall s with/without':>21}  same end",
    ]
    pairs = paired(runs)
    for a, b in pairs:
        same = _same(a, b)
        out.append(
            f"{a.case:24} {a.mode:9} {a.executions:>8} / {b.executions:<8} "
            f"{a.tool_seconds:>9.2f} / {b.tool_seconds:<9.2f} {a.replays:>7} {a.retries:>4} / {b.retries:<3} "
            f"{a.wall_seconds:>9.1f} / {b.wall_seconds:<9.1f}  {same}"
        )
    for mode in sorted({a.mode for a, _ in pairs}):
        mine = [(a, b) for a, b in pairs if a.mode == mode]
        ex = sum(a.executions for a, _ in mine), sum(b.executions for _, b in mine)
        ts = sum(a.tool_seconds for a, _ in mine), sum(b.tool_seconds for _, b in mine)
        out.append(
            f"{mode}: executions {ex[0]} vs {ex[1]} without the memo ({_ratio(*ex)}), tool-seconds {ts[0]:.2f} vs "
            f"{ts[1]:.2f} ({_ratio(*ts)}), {sum(a.replays for a, _ in mine)} replays"
        )
    ex = sum(a.executions for a, _ in pairs), sum(b.executions for _, b in pairs)
    ts = sum(a.tool_seconds for a, _ in pairs), sum(b.tool_seconds for _, b in pairs)
    alike = sum(_same(a, b) == "yes" for a, b in pairs)
    out.append(
        f"memo: executions {_ratio(*ex)} of the memo-less turn's, tool-seconds {_ratio(*ts)}; "
        f"{alike}/{len(pairs)} turns ended the same with and without, {len(broken_pairs(runs))} the same path with "
        "another result"
    )
    return "\n".join(out)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kinds", default=",".join(KINDS), help=f"real-suite kinds (default {','.join(KINDS)})")
    p.add_argument("--modes", default=",".join(MODES), help="search modes (default every one)")
    p.add_argument("--n", type=int, default=1, help="dev cases per kind (default 1)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cases", default="", help="dev case ids to run instead (comma-separated, e.g. dev-recolour-063)")


def run(args: argparse.Namespace) -> int:
    from costa.real.cases import KINDS as SUITE_KINDS

    kinds = [k for k in args.kinds.split(",") if k]
    modes = [m for m in args.modes.split(",") if m]
    bad = [k for k in kinds if k not in SUITE_KINDS] + [m for m in modes if m not in TURN_MODES]
    if bad or args.n < 1:
        print(f"error: unknown kind or mode {bad}, or --n {args.n} < 1", flush=True)
        return 2
    cases = chosen_cases(kinds, args.n, args.seed, [c for c in args.cases.split(",") if c])
    if not cases:
        print("error: no real-suite case here (its photos are scikit-image's and ../shared/benchmarks')", flush=True)
        return 2
    runs = run_memo_bench(cases, modes)
    print(format_report(runs))
    return 1 if broken_pairs(runs) else 0
