"""End-to-end latency of `python -m costa edit`, lazy search against the eager (published) search, in one run.

The benchmark writes a 768 × 576 photo-like image — a crop of a shared benchmark photo with a "SALE / TODAY" sign on
it, or a textured synthetic background when the photos are absent — and runs

    python -m costa edit IMG "replace the text 'SALE' with 'OPEN'" -o OUT.png [--eager]

as a subprocess `runs` times in each mode, alternating modes so drift in machine load hits both alike (after one
untimed warm-up run that fills the file cache). Wall seconds include interpreter start, imports and model loading:
what a user waits for. Each output is read back with OCR and passes when it reads OPEN and no longer reads SALE.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from costa.synthetic.scenes import Lettering, SignText, available_fonts, make_text_scene, photo_files
from costa.textmatch import find_matches

#: The edit every run performs.
INSTRUCTION = "replace the text 'SALE' with 'OPEN'"
IMAGE_WIDTH, IMAGE_HEIGHT = 768, 576
REPO_ROOT = Path(__file__).resolve().parents[1]
#: A run that takes longer than this (seconds) is a hang, not a measurement.
RUN_TIMEOUT_S = 300


@dataclass(frozen=True)
class EditRun:
    """One `costa edit` subprocess: wall seconds, exit code, the turn's own numbers and whether OCR reads the edit."""

    eager: bool
    wall_seconds: float
    returncode: int
    turn_seconds: float | None
    tool_seconds: float | None
    executions: int | None
    reads_new: bool
    reads_old: bool
    error: str = ""

    @property
    def passed(self) -> bool:
        return self.returncode == 0 and self.reads_new and not self.reads_old


def make_edit_image(seed: int = 0) -> tuple[np.ndarray, str]:
    """Return the benchmark image (RGB uint8, 768 × 576) and a description of its background."""
    photos = photo_files()
    background = "photo" if photos else "texture"
    scene = make_text_scene(
        seed,
        background=background,
        height=IMAGE_HEIGHT,
        width=IMAGE_WIDTH,
        lettering=Lettering("dejavu-sans-bold" if "dejavu-sans-bold" in available_fonts() else "pillow", 72, 0.0),
        text=SignText(("SALE", "TODAY"), target="SALE"),
        photos=photos,
    )
    return scene.image, ("a shared benchmark photo crop with a sign" if photos else "a synthetic woven texture")


def _run_once(image_path: Path, out_path: Path, events_path: Path, eager: bool, env: dict[str, str]) -> EditRun:
    cmd = [sys.executable, "-m", "costa", "edit", str(image_path), INSTRUCTION, "-o", str(out_path)]
    cmd += ["--events", str(events_path), "-q"] + (["--eager"] if eager else [])
    out_path.unlink(missing_ok=True)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    wall = time.perf_counter() - t0
    turn = None
    if events_path.exists():
        for line in events_path.read_text(encoding="utf-8").splitlines():
            event = json.loads(line)
            if event.get("kind") == "turn_done":
                turn = event
    reads_new = reads_old = False
    if out_path.exists():
        reads_new, reads_old = _reads(out_path)
    return EditRun(
        eager=eager,
        wall_seconds=wall,
        returncode=proc.returncode,
        turn_seconds=None if turn is None else float(turn["seconds"]),
        tool_seconds=None if turn is None else float(turn["tool_seconds"]),
        executions=None if turn is None else int(turn["executions"]),
        reads_new=reads_new,
        reads_old=reads_old,
        error="" if proc.returncode == 0 else proc.stderr.strip()[-300:],
    )


def _reads(path: Path) -> tuple[bool, bool]:
    """Whether OCR reads 'OPEN' and whether it still reads 'SALE' in the image at `path`."""
    from costa.images import load_image
    from costa.tools.ocr import RapidOcrReader

    regions = RapidOcrReader().read(load_image(path))
    return bool(find_matches(regions, "'OPEN'")), bool(find_matches(regions, "'SALE'"))


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def _fmt(value: float | None, spec: str) -> str:
    return "n/a" if value is None else format(value, spec)


def format_report(runs: list[EditRun], background: str) -> str:
    lines = [
        f"costa edit {INSTRUCTION!r} on a {IMAGE_WIDTH}x{IMAGE_HEIGHT} image ({background}), "
        f"{sum(not r.eager for r in runs)} runs per mode, subprocess wall time",
        f"{'mode':6} {'median wall s':>13} {'min':>7} {'max':>7} {'turn s':>7} {'tool runs':>9} {'tool s':>7}"
        "  OCR pass",
    ]
    medians = {}
    for eager in (False, True):
        rs = [r for r in runs if r.eager == eager]
        wall = [r.wall_seconds for r in rs]
        medians[eager] = (statistics.median(wall), _median([r.turn_seconds for r in rs]))
        lines.append(
            f"{'eager' if eager else 'lazy':6} {statistics.median(wall):13.2f} {min(wall):7.2f} {max(wall):7.2f} "
            f"{_fmt(_median([r.turn_seconds for r in rs]), '7.3f')} "
            f"{_fmt(_median([float(r.executions) if r.executions is not None else None for r in rs]), '9.0f')} "
            f"{_fmt(_median([r.tool_seconds for r in rs]), '7.3f')}  {sum(r.passed for r in rs)}/{len(rs)}"
        )
    lazy_wall, lazy_turn = medians[False]
    eager_wall, eager_turn = medians[True]
    lines.append(f"lazy / eager median wall time: {lazy_wall / eager_wall:.2f}")
    if lazy_turn is not None and eager_turn:
        lines.append(f"lazy / eager median turn time (in-process, after start-up): {lazy_turn / eager_turn:.2f}")
    for r in runs:
        if not r.passed:
            why = r.error or f"OCR reads OPEN: {r.reads_new}, still reads SALE: {r.reads_old}"
            lines.append(f"  {'eager' if r.eager else 'lazy'} run failed (exit {r.returncode}): {why}")
    return "\n".join(lines)


def run_edit_bench(runs: int = 5) -> str:
    """Run the edit `runs` times lazily and `runs` times eagerly (alternating) and return the report.

    Raises:
        ValueError: `runs` < 1.
    """
    if runs < 1:
        raise ValueError(f"runs must be at least 1, got {runs}")
    from costa.images import save_image

    image, background = make_edit_image()
    with tempfile.TemporaryDirectory(prefix="costa-edit-bench-") as tmp:
        folder = Path(tmp)
        image_path = save_image(image, folder / "sign.png")
        env = dict(os.environ)
        env["COSTA_HOME"] = str(folder / "home")
        env["HF_HUB_OFFLINE"] = "1"
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
        _run_once(image_path, folder / "warmup.png", folder / "warmup.jsonl", False, env)  # fills the file cache
        results = []
        for i in range(runs):
            for eager in (False, True) if i % 2 == 0 else (True, False):
                name = f"{'eager' if eager else 'lazy'}-{i}"
                results.append(_run_once(image_path, folder / f"{name}.png", folder / f"{name}.jsonl", eager, env))
    return format_report(results, background)


HELP = "end-to-end `costa edit` replacing one word on a 768 px image, lazy vs --eager in the same run"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare this benchmark's options."""
    p.add_argument("--runs", type=int, default=5, help="runs per mode (median reported)")


def run(args: argparse.Namespace) -> int:
    """Run and print the report."""
    print(run_edit_bench(runs=args.runs))
    return 0
