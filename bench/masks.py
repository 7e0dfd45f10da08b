"""`bench masks`: object masks on real photos against hand-traced truth, per tool and pointing, at 0.4 and 12 MP.

The truth is `tests/data/real_masks.json`: one object per photo (scikit-image's bundled photos and EditEval_v1's
Unsplash photos from ../shared/benchmarks), traced by hand as a polygon and checked by eye; its `split` says which
photos were used to choose parameters (`dev`) and which never were (`heldout`). Each photo is resized to a working
size (0.4 MP by default; `--mp 12` for 12-megapixel timings), and every segmenter is called through the tool classes
the search calls, with the pointing a user would give:

- click: one positive click at the object's innermost pixel (the truth's distance-transform maximum);
- box: the truth's bounding box grown by 5 % of its larger side on every side (clipped);
- none: no pointing (the salient object, or the people of a person photo).

It prints mask IoU against the truth and seconds per call, per tool and pointing and per split, and with `--write`
replaces those tools' rows of tool_tables/benchmark.csv by the measured figures (source `real`: quality = mean IoU,
pass_rate = share of cases with IoU ≥ `PASS_IOU`, seconds = median). `--save DIR` writes an overlay per call
(truth outline green, the tool's mask tinted) to look at.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from costa.errors import ToolError
from costa.services import Services
from costa.types import Box, EditState, Point, Subtask

HELP = "object masks on real photos against hand-traced truth: IoU and seconds per tool and pointing (0.4 / 12 MP)"
TRUTH_FILE = Path(__file__).resolve().parents[1] / "tests" / "data" / "real_masks.json"
#: IoU from which a mask counts as right (pass_rate of the `real` rows).
PASS_IOU = 0.8
#: Tools measured per pointing kind; `people` tools only on photos whose object is a person.
TOOLS: dict[str, tuple[str, ...]] = {
    "click": ("u2net_points", "points_grabcut"),
    "box": ("u2net_box", "grabcut_segment", "grabcut_background", "box_mask"),
    "none": ("u2net_salient", "rembg_u2net"),
    "people": ("selfie_people", "hog_people+grabcut_segment"),
    "people_boxes": ("selfie_people_boxes", "hog_people"),
}
#: Pointing kinds whose tools return boxes: graded by the IoU of their boxes with the truth's bounding box.
BOX_POINTINGS = frozenset({"people_boxes"})
#: Pointing kinds measured on person photos only.
PEOPLE_POINTINGS = frozenset({"people", "people_boxes"})
#: Measured for comparison but not written: a box as its own mask is what a face's privacy blur wants, so its rows
#: stay the synthetic ones (a whole object's box is a poor mask, which those rows already say).
NOT_WRITTEN = frozenset({"box_mask"})
#: Subtask the calls are made for (every mask tool serves it; people tools need a target naming people).
KIND = "object_segmentation"


@dataclass(frozen=True)
class MaskCase:
    """One photo with its hand-traced truth mask, at the size it is measured at."""

    name: str
    split: str
    person: bool
    image: np.ndarray
    truth: np.ndarray


@dataclass(frozen=True)
class Measured:
    """One tool call on one case: IoU against the truth (0 when the tool failed) and seconds."""

    case: str
    split: str
    tool: str
    pointing: str
    iou: float
    seconds: float
    error: str = ""


def load_photo(source: str, benchmarks: Path | None) -> np.ndarray | None:
    """The photo named `skimage:NAME` or `editeval:PATH` (under editeval_v1/images); None when not available."""
    if source.startswith("skimage:"):
        from skimage import data

        return np.ascontiguousarray(getattr(data, source.split(":", 1)[1])())
    path = benchmarks / "editeval_v1" / "images" / source.split(":", 1)[1] if benchmarks is not None else None
    if path is None or not path.is_file():
        return None
    from costa.images import load_image

    return load_image(path)


def polygon_mask(polygon: Sequence[Sequence[int]], height: int, width: int) -> np.ndarray:
    """The bool (height, width) mask inside `polygon` (vertices in pixels)."""
    from PIL import Image, ImageDraw

    canvas = Image.new("L", (width, height), 0)
    ImageDraw.Draw(canvas).polygon([(float(x), float(y)) for x, y in polygon], fill=255)
    return np.asarray(canvas) > 127


def load_mask_cases(megapixels: float | None = None, benchmarks: Path | None = None) -> list[MaskCase]:
    """Every truth case whose photo is here, resized to `megapixels` (None: as shipped); truth resized with it."""
    import cv2

    doc = json.loads(TRUTH_FILE.read_text(encoding="utf-8"))
    out = []
    for row in doc["cases"]:
        image = load_photo(row["photo"], benchmarks)
        if image is None:
            continue
        truth = polygon_mask(row["polygon"], image.shape[0], image.shape[1])
        if megapixels is not None:
            f = (megapixels * 1e6 / (image.shape[0] * image.shape[1])) ** 0.5
            size = (round(image.shape[1] * f), round(image.shape[0] * f))
            interp = cv2.INTER_AREA if f < 1 else cv2.INTER_LANCZOS4
            image = cv2.resize(image, size, interpolation=interp)
            truth = cv2.resize(truth.astype(np.uint8), size, interpolation=cv2.INTER_NEAREST) > 0
        out.append(MaskCase(row["name"], row["split"], bool(row["person"]), image, truth))
    return out


def click_on(truth: np.ndarray) -> Point:
    """The truth's innermost pixel (farthest from its edge): where a user clicks to point at the object."""
    import cv2

    dist = cv2.distanceTransform(np.pad(truth, 1).astype(np.uint8), cv2.DIST_L2, 5)[1:-1, 1:-1]
    y, x = np.unravel_index(int(np.argmax(dist)), dist.shape)
    return Point(int(x), int(y))


def box_around(truth: np.ndarray, grow: float = 0.05) -> Box:
    """The truth's bounding box grown by `grow` × its larger side on every side, clipped: a user's box."""
    ys, xs = np.nonzero(truth)
    x1, y1, x2, y2 = int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1
    pad = round(grow * max(x2 - x1, y2 - y1))
    h, w = truth.shape
    x1, y1, x2, y2 = max(0, x1 - pad), max(0, y1 - pad), min(w, x2 + pad), min(h, y2 + pad)
    return Box(x1, y1, x2 - x1, y2 - y1)


def iou(a: np.ndarray, b: np.ndarray) -> float:
    union = int((a | b).sum())
    return int((a & b).sum()) / union if union else 0.0


def _mask_of(services: Services, tool: str, state: EditState, subtask: Subtask) -> np.ndarray:
    """The union of the masks `tool` returns (for a chain "a+b", b run on a's output); rembg's kept subject."""
    spec = services.tables.tools[tool.split("+")[0]]
    out = services.tool(spec.id)(state, subtask, spec.params_for_attempt(0))
    if "+" in tool:
        second = services.tables.tools[tool.split("+")[1]]
        state = state.with_output(out)
        out = services.tool(second.id)(state, subtask, second.params_for_attempt(0))
    if out.image is not None and out.edited_region is not None:
        return ~out.edited_region
    union = np.zeros((state.height, state.width), dtype=bool)
    for m in out.artifacts.get("masks") or ():
        union |= m.data
    for b in out.artifacts.get("boxes") or ():
        union[b.y : b.y2, b.x : b.x2] = True
    return union


def measure(services: Services, case: MaskCase, tool: str, pointing: str) -> tuple[Measured, np.ndarray | None]:
    """Call `tool` on `case` with the pointing a user would give; the IoU, the seconds and the mask."""
    artifacts: dict[str, object] = {}
    if pointing == "click":
        artifacts["points"] = (click_on(case.truth),)
    elif pointing == "box":
        artifacts["boxes"] = (box_around(case.truth),)
    target = "the person" if pointing in PEOPLE_POINTINGS else None
    truth = box_around(case.truth, 0.0).to_mask(*case.truth.shape) if pointing in BOX_POINTINGS else case.truth
    state = EditState(case.image, artifacts)
    t0 = time.perf_counter()
    try:
        mask = _mask_of(services, tool, state, Subtask(id="s", kind=KIND, target=target))
    except ToolError as e:
        seconds = time.perf_counter() - t0
        return Measured(case.name, case.split, tool, pointing, 0.0, seconds, str(e)[:80]), None
    seconds = time.perf_counter() - t0
    return Measured(case.name, case.split, tool, pointing, iou(mask, truth), seconds), mask


def save_overlay(path: Path, case: MaskCase, mask: np.ndarray | None) -> None:
    """The photo darkened outside `mask`, the truth's outline in green (for looking at)."""
    import cv2
    from PIL import Image

    view = case.image.copy()
    if mask is not None:
        view[~mask] = (view[~mask] * 0.35).astype(np.uint8)
    edge = cv2.morphologyEx(case.truth.astype(np.uint8), cv2.MORPH_GRADIENT, np.ones((3, 3), np.uint8)) > 0
    view[cv2.dilate(edge.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0] = (0, 255, 0)
    img = Image.fromarray(view)
    img.thumbnail((800, 800))
    img.save(path)


def run_masks_bench(
    services: Services,
    cases: Sequence[MaskCase],
    save: Path | None = None,
    warm: bool = True,
    only: Sequence[str] = (),
) -> list[Measured]:
    """Every tool of `TOOLS` (or those named in `only`) on every case (people tools on person photos only); one
    warm-up call per tool first."""
    results = []
    for pointing, tools in TOOLS.items():
        for tool in tools:
            if only and tool not in only:
                continue
            chosen = [c for c in cases if c.person or pointing not in PEOPLE_POINTINGS]
            if warm and chosen:
                measure(services, chosen[0], tool, pointing)  # loads the model: not timed
            for case in chosen:
                result, mask = measure(services, case, tool, pointing)
                results.append(result)
                if save is not None:
                    save.mkdir(parents=True, exist_ok=True)
                    save_overlay(save / f"{case.name}_{pointing}_{tool.replace('+', '_')}.png", case, mask)
    return results


def format_report(results: Sequence[Measured], megapixels: float) -> str:
    lines = [
        f"mask IoU against hand-traced truth on real photos at {megapixels:g} MP (mean; right = IoU ≥ {PASS_IOU}; "
        "faces: matched faces over the larger of found and true, on the photos as shipped)"
    ]
    lines.append(f"  {'pointing':8} {'tool':28} {'dev IoU':>8} {'held-out':>9} {'right':>7} {'s/call':>8}  failures")
    keys = list(dict.fromkeys((r.pointing, r.tool) for r in results))
    for pointing, tool in keys:
        rows = [r for r in results if (r.pointing, r.tool) == (pointing, tool)]
        dev = [r.iou for r in rows if r.split == "dev"]
        held = [r.iou for r in rows if r.split == "heldout"]
        right = sum(r.iou >= PASS_IOU for r in rows)
        fails = [f"{r.case}: {r.error}" for r in rows if r.error]
        lines.append(
            f"  {pointing:8} {tool:28} {statistics.fmean(dev) if dev else float('nan'):8.3f} "
            f"{statistics.fmean(held) if held else float('nan'):9.3f} {right:>3}/{len(rows):<3} "
            f"{statistics.median(r.seconds for r in rows):8.3f}  {'; '.join(fails)[:160]}"
        )
    lines.append("  per case: " + "; ".join(f"{r.case}/{r.pointing}/{r.tool} {r.iou:.2f}" for r in results))
    return "\n".join(lines)


def table_rows(services: Services, results: Sequence[Measured]) -> dict[tuple[str, str], str]:
    """(tool, subtask) → the benchmark.csv line measured here, for every subtask each measured single tool serves
    (chains such as hog_people+grabcut_segment are reported, not written: their parts have rows of their own)."""
    out = {}
    for tool in dict.fromkeys(r.tool for r in results):
        if "+" in tool or tool in NOT_WRITTEN:
            continue
        rows = [r for r in results if r.tool == tool]
        seconds = max(statistics.median(r.seconds for r in rows), 1e-4)
        quality = statistics.fmean(r.iou for r in rows)
        right = sum(r.iou >= PASS_IOU for r in rows) / len(rows)
        for kind in services.tables.tools[tool].subtasks:
            out[(tool, kind)] = f"{tool},{kind},{seconds:.4g},{quality:.3g},{right:.3g},real,{len(rows)}"
    return out


def write_rows(path: Path, rows: dict[tuple[str, str], str]) -> None:
    """Replace the rows of `rows` in the benchmark CSV at `path`; every other line is kept byte for byte."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    done = set()
    for i, line in enumerate(lines):
        key = tuple(line.split(",")[:2])
        if key in rows:
            lines[i] = rows[key] + "\n"
            done.add(key)
    missing = set(rows) - done
    if missing:
        raise ValueError(f"{path.name} has no row for {sorted(missing)}")
    path.write_text("".join(lines), encoding="utf-8")


#: Face detectors compared on the hand-boxed faces of `TRUTH_FILE`'s "faces" (the photos as shipped).
FACE_TOOLS = ("blazeface_faces", "haar_faces")
#: Box IoU from which a found face matches a true one.
FACE_IOU = 0.4


def face_quality(found: Sequence[Box], truth: Sequence[Box]) -> float:
    """Matched faces over the larger of found and true (1.0 when neither has any): misses and false faces both cost."""
    from costa.tools.detection import box_iou

    if not found and not truth:
        return 1.0
    left = list(found)
    matched = 0
    for t in truth:
        best = max(left, key=lambda f: box_iou(f, t), default=None)
        if best is not None and box_iou(best, t) >= FACE_IOU:
            matched += 1
            left.remove(best)
    return matched / max(len(found), len(truth))


def run_faces_bench(services: Services, benchmarks: Path | None) -> list[Measured]:
    """Each face tool on each photo of the truth file's "faces" (a photo with no face: right when none is found)."""
    doc = json.loads(TRUTH_FILE.read_text(encoding="utf-8"))
    results = []
    for tool in FACE_TOOLS:
        spec = services.tables.tools[tool]
        for i, row in enumerate(doc["faces"]):
            image = load_photo(row["photo"], benchmarks)
            if image is None:
                continue
            truth = [Box(*b) for b in row["boxes"]]
            subtask = Subtask(id="s", kind="privacy_blur", target="the faces")
            if i == 0:
                with contextlib.suppress(ToolError):  # loads the model: not timed
                    services.tool(tool)(EditState(image), subtask, spec.params_for_attempt(0))
            t0 = time.perf_counter()
            try:
                out = services.tool(tool)(EditState(image), subtask, spec.params_for_attempt(0))
                found = list(out.artifacts.get("boxes") or ())
                error = ""
            except ToolError as e:
                found, error = [], str(e)[:60]
            seconds = time.perf_counter() - t0
            name = row["photo"].split(":", 1)[1]
            results.append(Measured(name, row["split"], tool, "faces", face_quality(found, truth), seconds, error))
    return results


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mp", type=float, default=0.4, help="megapixels each photo is resized to (default 0.4)")
    p.add_argument("--split", choices=("dev", "heldout", "all"), default="all")
    p.add_argument("--save", type=Path, default=None, help="write an overlay per call into this folder")
    p.add_argument("--tools", default="", help="comma-separated tools to measure (default all; e.g. at --mp 12)")
    p.add_argument("--write", action="store_true", help="write the measured tools' rows of tool_tables/benchmark.csv")


def run(args: argparse.Namespace) -> int:
    from bench.cli import benchmarks_dir

    cases = [c for c in load_mask_cases(args.mp, benchmarks_dir()) if args.split in ("all", c.split)]
    if not cases:
        print("no truth photos available (scikit-image missing and ../shared/benchmarks absent)")
        return 2
    from costa.tables import BENCHMARK_FILE, TABLES_DIR

    services = Services()
    only = tuple(t for t in args.tools.split(",") if t)
    results = run_masks_bench(services, cases, args.save, only=only)
    if args.split == "all" and not only:
        results += run_faces_bench(services, benchmarks_dir())
    print(format_report(results, args.mp))
    if args.write:
        rows = table_rows(services, results)
        write_rows(TABLES_DIR / BENCHMARK_FILE, rows)
        print(f"wrote {len(rows)} rows of {BENCHMARK_FILE} (source real)")
    return 0
