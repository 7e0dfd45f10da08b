"""`python -m costa bench grounding`: the colour grounder's cost on the same photo at 0.4 and 12 megapixels.

The grounder segments at a bounded working scale (`colour_ground.WORK_PIXELS`) and refines only the mask's edge at
full resolution, so the 12-MP photo should cost at most 3× the 0.4-MP one. The photo is scikit-image's astronaut
resized (area interpolation down, Lanczos up) to each size; the target is "the red area" (her flag patch and the
red-brown parts of the suit). Each size is timed `runs` times after one untimed warm-up; medians are compared. The
masks are also compared: the 12-MP mask shrunk to 0.4 MP against the 0.4-MP mask (IoU), so speed was not bought with
a different answer.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from costa.types import EditState, Subtask

#: Pixel counts measured: the small photo and the large one.
SMALL_PIXELS = 400_000
LARGE_PIXELS = 12_000_000
TARGET = "the red area"


def _photo(pixels: int) -> np.ndarray:
    import cv2
    from skimage.data import astronaut

    src = np.ascontiguousarray(astronaut())
    h, w = src.shape[:2]
    s = (pixels / float(h * w)) ** 0.5
    size = (round(w * s), round(h * s))
    interp = cv2.INTER_AREA if s < 1 else cv2.INTER_LANCZOS4
    return np.ascontiguousarray(cv2.resize(src, size, interpolation=interp))


def _time(tool: object, image: np.ndarray, runs: int) -> tuple[float, np.ndarray]:
    sub = Subtask(id="s1", kind="object_recoloration", target=TARGET, result="blue")
    state = EditState(image)
    out = tool(state, sub, {})  # type: ignore[operator]  # warm-up (imports, caches)
    seconds = []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = tool(state, sub, {})  # type: ignore[operator]
        seconds.append(time.perf_counter() - t0)
    mask = np.zeros(image.shape[:2], bool)
    for m in out.artifacts["masks"]:
        mask |= m.data
    return statistics.median(seconds), mask


def run_grounding_bench(runs: int = 3) -> str:
    """Time the colour grounder at 0.4 MP and 12 MP and return the report (ratio, seconds, mask agreement)."""
    import cv2

    from costa.tables import load_tables
    from costa.tools.colour_ground import ColourGrounder

    tool = ColourGrounder(load_tables().tools["colour_grounder"])
    small, large = _photo(SMALL_PIXELS), _photo(LARGE_PIXELS)
    s_small, m_small = _time(tool, small, runs)
    s_large, m_large = _time(tool, large, runs)
    shrunk = cv2.resize(m_large.astype(np.uint8), (small.shape[1], small.shape[0]), interpolation=cv2.INTER_AREA) > 0
    union = (shrunk | m_small).sum()
    iou = float((shrunk & m_small).sum() / union) if union else 1.0
    ratio = s_large / s_small
    lines = [
        f"colour grounder, target {TARGET!r}, median of {runs} runs after a warm-up",
        f"  {small.shape[1]}x{small.shape[0]} ({small.shape[0] * small.shape[1] / 1e6:.2f} MP): {s_small:.3f} s, "
        f"mask {m_small.mean():.1%} of the image",
        f"  {large.shape[1]}x{large.shape[0]} ({large.shape[0] * large.shape[1] / 1e6:.2f} MP): {s_large:.3f} s, "
        f"mask {m_large.mean():.1%} of the image",
        f"  ratio 12 MP / 0.4 MP: {ratio:.2f}x (target ≤ 3x: {'met' if ratio <= 3.0 else 'NOT met'})",
        f"  mask agreement (12 MP mask shrunk to 0.4 MP vs the 0.4 MP mask): IoU {iou:.3f}",
    ]
    return "\n".join(lines)


HELP = "colour grounder seconds on a 12-MP photo against a 0.4-MP one (target ≤ 3×) and the masks' agreement"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare this benchmark's options."""
    p.add_argument("--runs", type=int, default=3, help="timed runs per size (median reported)")


def run(args: argparse.Namespace) -> int:
    """Validate `--runs`, run, print the report."""
    from costa.errors import InputError

    if args.runs < 1:
        raise InputError(f"--runs must be at least 1, got {args.runs}")
    print(run_grounding_bench(runs=args.runs))
    return 0
