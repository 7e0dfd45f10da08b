"""Measure every ready embedded tool on synthetic cases and (optionally) write the results into benchmark.csv.

For each (tool, subtask) row of the benchmark table whose tool is ready, embedded and runnable here, the real tool runs
on `cases` synthetic cases of that subtask (`costa.synthetic.cases`) with its first-attempt parameters:

- **seconds**: median wall time of the tool call alone (inputs built, models loaded and OCR warmed up beforehand).
- **quality**: the mean graded quality — how well the tool did what was asked — against ground truth where the
  scenes have it (`costa.synthetic.grades`: upscaling, deblurring and outpainting by SSIM against the true image,
  removal by SSIM against the true background, recolouring by ΔE + shading + outside SSIM, masks by IoU, text
  detection by word recall or whether the target was found); `source` "truth". Where no truth exists (text edits,
  privacy blur, background removal, global adjustments) it is the mean check quality; `source` "check".
- **pass_rate**: the share of cases whose score reaches 0.8, the search's threshold. A *final* step (the tool outputs
  the subtask's `produces` type) is scored by `check_step`, exactly as the search scores it. An *intermediate* step
  (a detector or segmenter feeding an editor) is scored against ground truth, because its own check only tests
  plausibility: OCR detection must find the target (a matching region covering half of its true box), a mask must
  reach IoU ≥ 0.8 with the true mask.

Inputs of final steps are the real upstream results where they exist, else ground truth: text editors get the regions
`rapidocr_detect` found on the same case (so text regions carry recognised text and OCR-sized boxes, as in
production); on a case where detection missed the target they get the ground-truth line regions instead, so the
editor's row measures the editor and not the detector (the search multiplies the two rows' qualities along a path).
Segmentation and removal/recolouring tools get the ground-truth box (grown by 8 %, as a user draws it) or mask.

A run also reports, for removal, masked PSNR against the true background and the α = 0 / α = 2 choice the scores make.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import logging
import math
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
import yaml

from costa.checks import CheckContext, check_step
from costa.errors import ToolError
from costa.masks import dilate_mask
from costa.search import DEFAULT_THRESHOLD, score
from costa.services import Services
from costa.synthetic.cases import (
    CASE_KINDS,
    BenchCase,
    make_cases,
    mask_iou,
    masked_psnr,
    target_found,
    targeted_adjust_cases,
    word_recall,
)
from costa.synthetic.cases_image import ImageCase, image_truth
from costa.tables import BENCHMARK_COLUMNS, BENCHMARK_FILE, SUBTASKS_FILE, TABLES_DIR, TOOLS_FILE, parse_tables
from costa.types import EditState, Mask, TextRegion, ToolSpec

log = logging.getLogger(__name__)

#: Least seconds written to the table (timer resolution; the score needs C > 0).
MIN_SECONDS = 1e-4
#: Mask IoU an intermediate segmentation needs to count as right.
MIN_IOU = 0.8
#: Pixels the removed region is grown by for masked PSNR (anti-aliased text edges, object rims).
PSNR_GROW_PX = 2


@dataclass(frozen=True)
class PairResult:
    """One (tool, subtask) measurement.

    `role` is "final" (scored by check_step) or "intermediate" (scored against ground truth); `qualities` are the
    per-case scores in [0, 1]; `truth` is a per-case ground-truth measure named by `truth_name` (IoU, word recall,
    PSNR in dB…), None where there is none; `fallbacks` counts cases given ground-truth text regions because detection
    missed the target.
    """

    tool: str
    subtask: str
    role: str
    seconds: tuple[float, ...]
    qualities: tuple[float, ...]
    failures: tuple[str, ...] = ()
    truth_name: str = ""
    truth: tuple[float, ...] = ()
    fallbacks: int = 0
    extra: tuple[tuple[tuple[str, float], ...], ...] = ()  # per case: further named ground-truth measures
    grades: tuple[float | None, ...] = ()  # per case: graded quality against truth (None: no truth for the case)

    @property
    def n(self) -> int:
        return len(self.qualities)

    @property
    def median_seconds(self) -> float:
        return max(MIN_SECONDS, statistics.median(self.seconds))

    @property
    def pass_rate(self) -> float:
        return sum(q >= DEFAULT_THRESHOLD for q in self.qualities) / self.n

    @property
    def source(self) -> str:
        """ "truth" when every case was graded against ground truth, else "check"."""
        return "truth" if self.grades and all(g is not None for g in self.grades) else "check"

    @property
    def quality(self) -> float:
        """Mean graded quality (see the module docstring): truth grades when every case has one, else checks'."""
        if self.source == "truth":
            return statistics.fmean(g for g in self.grades if g is not None)
        return statistics.fmean(self.qualities)

    @property
    def mean_truth(self) -> float | None:
        finite = [t for t in self.truth if math.isfinite(t)]
        return statistics.fmean(finite) if finite else None


@dataclass
class _Run:
    services: Services
    ctx: CheckContext
    seed: int = 0
    cases: dict[str, list[BenchCase]] = field(default_factory=dict)
    detected: dict[tuple[str, int], tuple[TextRegion, ...]] = field(default_factory=dict)
    #: (tool, image digest) → (seconds, output) of tools that read only the image: one call serves every subtask.
    memo: dict[tuple[str, bytes], tuple[float, Any]] = field(default_factory=dict)


def _call(
    run: _Run, tool_id: str, spec: ToolSpec, before: EditState, case: BenchCase, params: dict
) -> tuple[float, Any]:
    """Time one tool call; return (seconds, output), where output is the `ToolError` when the tool failed.

    A tool that only reads the image and outputs no image (a detector) gives the same result whatever the subtask, so
    its call on a scene is made once and reused by the other subtasks sharing that scene.
    """
    key = (
        tool_id,
        hashlib.blake2b(case.image.tobytes(), digest_size=16).digest() + bytes(str(case.image.shape), "ascii"),
    )
    reusable = spec.inputs == ("image",) and "image" not in spec.outputs
    if reusable and key in run.memo:
        return run.memo[key]
    tool = run.services.tool(tool_id)
    t0 = time.perf_counter()
    try:
        output: Any = tool(before, case.subtask, params)
    except ToolError as e:
        output = e
    result = (time.perf_counter() - t0, output)
    if reusable:
        run.memo[key] = result
    return result


def _inputs(run: _Run, spec: ToolSpec, kind: str, i: int, case: BenchCase) -> tuple[EditState, bool]:
    """The edit state a tool starts from on this case, and whether ground-truth text regions had to stand in."""
    artifacts: dict[str, Any] = {}
    fallback = False
    for t in spec.inputs:
        if t == "text_regions":
            regions = run.detected.get((kind, i))
            if regions is None:
                regions, fallback = case.gt_regions(), True
            artifacts[t] = regions
        elif t == "boxes":
            artifacts[t] = (case.user_box(),)
        elif t == "masks":
            artifacts[t] = (case.gt_mask(),)
        elif t == "points":
            from costa.synthetic.cases_grounding import click_points

            artifacts[t] = click_points(case)
        elif t != "image":
            raise ValueError(f"the tools benchmark cannot build input {t!r} for {spec.id!r}")
    return EditState(case.image, artifacts), fallback


def _union(masks: Sequence[Any], shape: tuple[int, ...]) -> np.ndarray:
    union = np.zeros(shape[:2], dtype=bool)
    for m in masks:
        union |= m.data if isinstance(m, Mask) else np.asarray(m, dtype=bool)
    return union


@dataclass(frozen=True)
class _Scored:
    quality: float
    failure: str | None
    truth_name: str = ""
    truth: float | None = None
    extra: tuple[tuple[str, float], ...] = ()
    grade: float | None = None


def recolour_truth(case: BenchCase, output_image: np.ndarray) -> tuple[tuple[str, float], ...]:
    """Recolour against ground truth: median ΔE2000 to the target inside the true mask, shading correlation there,
    and SSIM outside the mask (grown 7 px so no SSIM window sees the edit) — the issue's recolour measures."""
    from skimage.metrics import structural_similarity

    from costa.checks.common import ciede2000_values, shading_correlation
    from costa.colours import parse_colour

    mask = case.gt_mask().data
    rgb = case.subtask.params.get("rgb") or parse_colour(case.subtask.result or "")
    if rgb is None:
        return ()
    delta_e = float(
        np.median(ciede2000_values(output_image, mask, cast(tuple[int, int, int], tuple(int(v) for v in rgb))))
    )
    shading = shading_correlation(case.image, output_image, mask)
    _, ssim_map = structural_similarity(case.image, output_image, channel_axis=2, full=True, data_range=255)
    outside = ~dilate_mask(mask, 7)
    ssim_outside = float(ssim_map[outside].mean()) if outside.any() else 1.0
    out = [("median ΔE2000", delta_e), ("outside SSIM", ssim_outside)]
    if shading is not None:
        out.append(("shading corr", float(shading)))
    return tuple(out)


def _grade(case: BenchCase, kind: str, output: Any, regions: Any, masks: Any) -> float | None:
    """Graded quality of one output against the case's ground truth (`costa.synthetic.grades`); None without truth."""
    from costa.synthetic import grades

    if regions is not None:
        return word_recall(case, regions) if case.target_box() is None else float(target_found(case, regions))
    if masks:
        return grades.mask_grade(_union(masks, case.image.shape), case.removed_region()).value
    if output.image is None:
        return None
    if kind in ("object_removal", "text_removal"):
        return grades.removal_grade(output.image, case.background, case.removed_region(), PSNR_GROW_PX).value
    if kind == "object_recoloration":
        from costa.colours import parse_colour

        rgb = case.subtask.params.get("rgb") or parse_colour(case.subtask.result or "")
        if rgb is None:
            return None
        return grades.recolour_grade(
            case.image, output.image, case.gt_mask().data, cast(tuple[int, int, int], tuple(int(v) for v in rgb))
        ).value
    if isinstance(case, ImageCase) and case.truth is not None:
        if kind == "image_upscaling":
            return grades.upscale_grade(output.image, case.truth).value
        if kind == "image_deblurring":
            return grades.deblur_grade(output.image, case.truth).value
        if kind == "outpainting":
            return grades.outpaint_grade(output.image, case.truth, case.origin, case.image.shape[:2]).value
    return None


def _score(run: _Run, case: BenchCase, spec: ToolSpec, kind: str, before: EditState, output: Any) -> _Scored:
    """Score one tool output: by `check_step` when it finishes the subtask, else against ground truth; and grade it
    against ground truth where the case has it."""
    sub_spec = run.services.tables.subtasks[kind]
    from costa.synthetic.cases_grounding import GroundingCase, score_grounding

    final = sub_spec.produces in spec.outputs
    if isinstance(case, GroundingCase):  # faces and people: truth by coverage of the object (see cases_grounding)
        quality, failure, truth_name, truth = score_grounding(run.ctx, sub_spec, case, spec, before, output)
        # an intermediate step is scored by ground truth (the object covered or not), a final one by its check
        return _Scored(quality, failure, truth_name, truth, grade=None if final else quality)
    regions = output.artifacts.get("text_regions")
    masks = output.artifacts.get("masks")
    grade = _grade(case, kind, output, regions, masks)
    truth_name, truth = "", None
    if regions is not None:
        truth_name, truth = "word recall", word_recall(case, regions)
    elif masks:
        truth_name, truth = "mask IoU", mask_iou(_union(masks, case.image.shape), case.removed_region())
    elif kind in ("object_removal", "text_removal") and output.image is not None:
        region = dilate_mask(case.removed_region(), PSNR_GROW_PX)
        truth_name, truth = "PSNR dB", masked_psnr(output.image, case.background, region)
    elif isinstance(case, ImageCase) and output.image is not None:  # upscaling, deblurring, outpainting
        measured = image_truth(case, output.image)
        if measured is not None:
            truth_name, truth = measured
    extra: tuple[tuple[str, float], ...] = ()
    if kind == "object_recoloration" and output.image is not None:
        extra = recolour_truth(case, output.image)
    if final:
        after = before.with_output(output)
        try:
            verdict = check_step(run.ctx, sub_spec, case.subtask, spec.outputs, before, after, output)
            quality, reasons = verdict.quality, verdict.reasons
        except ToolError as e:
            quality, reasons = 0.0, (f"check could not run: {e}",)
        failure = None if quality >= DEFAULT_THRESHOLD else "; ".join(reasons)
        return _Scored(quality, failure, truth_name, truth, extra, grade)
    if regions is not None:
        found = target_found(case, regions)
        failure = None if found else f"target {case.subtask.target!r} not found; read {[r.text for r in regions][:6]}"
        return _Scored(float(found), failure, truth_name, truth, grade=grade)
    if masks and truth is not None:  # intermediate masks: quality is the IoU, passing at ≥ MIN_IOU
        return _Scored(truth, None if truth >= MIN_IOU else f"mask IoU {truth:.2f} < {MIN_IOU}", truth_name, truth,
                       grade=grade)  # fmt: skip
    raise ValueError(f"no ground-truth measure for {spec.id!r} (outputs {spec.outputs}) on {kind!r}")


def _measure(run: _Run, tool_id: str, kind: str) -> PairResult:
    spec = run.services.tables.tools[tool_id]
    run.services.tool(tool_id).ensure_loaded()  # load models outside the timed calls
    params = spec.params_for_attempt(0)
    seconds, qualities, failures, truth, extra = [], [], [], [], []
    grades: list[float | None] = []
    fallbacks, truth_name = 0, ""
    from costa.synthetic.cases_grounding import tool_cases

    own = tool_cases(tool_id, kind, len(run.cases[kind]), run.seed)
    if (
        own is None
        and kind == "global_adjustment"
        and ("masks" in spec.inputs or {"masks", "boxes"} & set(spec.outputs))
    ):
        own = targeted_adjust_cases(len(run.cases[kind]), run.seed)  # a grounder or region editor needs a target
    for i, case in enumerate(own if own is not None else run.cases[kind]):
        before, fallback = _inputs(run, spec, kind, i, case)
        fallbacks += fallback
        elapsed, output = _call(run, tool_id, spec, before, case, params)
        seconds.append(elapsed)
        if isinstance(output, ToolError):
            qualities.append(0.0)
            grades.append(0.0)  # a failed call did nothing of what was asked
            failures.append(f"tool failed: {output}")
            continue
        scored = _score(run, case, spec, kind, before, output)
        qualities.append(scored.quality)
        grades.append(scored.grade)
        if scored.failure is not None:
            failures.append(scored.failure)
        if scored.truth is not None:
            truth_name = scored.truth_name
            truth.append(scored.truth)
        if scored.extra:
            extra.append(scored.extra)
        regions = output.artifacts.get("text_regions")
        if regions is not None and scored.quality >= DEFAULT_THRESHOLD:
            run.detected[(kind, i)] = tuple(regions)  # what the text editors of this subtask start from
    final = run.services.tables.subtasks[kind].produces in spec.outputs
    return PairResult(
        tool_id, kind, "final" if final else "intermediate", tuple(seconds), tuple(qualities), tuple(failures),
        truth_name, tuple(truth), fallbacks, tuple(extra), tuple(grades),
    )  # fmt: skip


def measurable_pairs(services: Services, tools: Sequence[str] | None = None) -> tuple[list[tuple[str, str]], list[str]]:
    """(tool, subtask) rows to measure, detectors first within each subtask; and why other ready tools are skipped.

    Args:
        tools: measure only these tool ids (default every ready embedded tool).

    Raises:
        ValueError: a tool in `tools` is not in the tables.
    """
    tables = services.tables
    unknown = sorted(set(tools or ()) - set(tables.tools))
    if unknown:
        raise ValueError(f"unknown tool id(s) {unknown}")
    pairs, skipped = [], []
    for tool_id, spec in tables.tools.items():
        if tools is not None and tool_id not in tools:
            continue
        if spec.status != "ready" or spec.backend != "embedded":
            if tools is not None:
                skipped.append(f"{tool_id}: status {spec.status}, backend {spec.backend}")
            continue
        why = services.why_not(tool_id)
        if why is not None:
            skipped.append(f"{tool_id}: {why}")
            continue
        for kind in spec.subtasks:
            if tables.benchmark[(tool_id, kind)].source == "real":
                skipped.append(f"{tool_id} on {kind}: measured on real photos (bench masks), not replaced")
            elif kind in CASE_KINDS:
                pairs.append((tool_id, kind))
            else:
                skipped.append(f"{tool_id} on {kind}: no synthetic cases for this subtask")
    order = {k: i for i, k in enumerate(tables.subtasks)}
    pairs.sort(key=lambda p: (order[p[1]], "text_regions" not in tables.tools[p[0]].outputs, p[0]))
    return pairs, skipped


def rewrite_benchmark_csv(text: str, results: Sequence[PairResult]) -> str:
    """Return the CSV `text` with the rows of `results` replaced by measured values; every other line byte-identical.

    Raises:
        ValueError: the header is not `BENCHMARK_COLUMNS`, or a measured pair has no row to replace.
    """
    lines = text.splitlines(keepends=True)
    if not lines or tuple(next(csv.reader([lines[0]]))) != BENCHMARK_COLUMNS:
        raise ValueError(f"benchmark CSV header must be {','.join(BENCHMARK_COLUMNS)}")
    measured = {(r.tool, r.subtask): r for r in results}
    replaced = set()
    out = [lines[0]]
    for line in lines[1:]:
        row = next(csv.reader([line]), [])
        key = (row[0], row[1]) if len(row) >= 2 else None
        if key in measured:
            r = measured[key]
            ending = line[len(line.rstrip("\r\n")) :]
            buf = io.StringIO()
            csv.writer(buf, lineterminator="").writerow(
                [
                    r.tool,
                    r.subtask,
                    f"{r.median_seconds:.4g}",
                    f"{round(r.quality, 3):g}",
                    f"{round(r.pass_rate, 3):g}",
                    r.source,
                    r.n,
                ]
            )
            out.append(buf.getvalue() + ending)
            replaced.add(key)
        else:
            out.append(line)
    missing = set(measured) - replaced
    if missing:
        raise ValueError(f"no benchmark rows to replace for {sorted(missing)}")
    return "".join(out)


def _write_csv(path: Path, results: Sequence[PairResult]) -> None:
    """Rewrite `path` with measured rows after validating the result against the yaml tables beside it (or the
    project's when absent); the file is replaced atomically."""
    with open(path, encoding="utf-8", newline="") as f:  # newline="": keep the file's own line endings
        new_text = rewrite_benchmark_csv(f.read(), results)
    folder = path.parent if (path.parent / TOOLS_FILE).exists() else TABLES_DIR
    docs = [yaml.safe_load((folder / name).read_text(encoding="utf-8")) for name in (SUBTASKS_FILE, TOOLS_FILE)]
    parse_tables(docs[0], docs[1], new_text, (str(folder / SUBTASKS_FILE), str(folder / TOOLS_FILE), str(path)))
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".benchmark-", suffix=".csv")
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
        f.write(new_text)
    os.replace(tmp, path)


def _removal_tradeoff(results: Sequence[PairResult]) -> list[str]:
    lines = []
    for kind in ("object_removal", "text_removal"):
        rows = [r for r in results if r.subtask == kind and r.role == "final"]
        if len(rows) < 2:
            continue
        lines.append(f"{kind}: masked PSNR vs the true background, and the single-step score C^α·(2−Q)^(2−α)")
        for r in rows:
            psnr = "n/a" if r.mean_truth is None else f"{r.mean_truth:5.1f} dB"
            s0, s2 = score(r.median_seconds, r.quality, 0.0), score(r.median_seconds, r.quality, 2.0)
            lines.append(
                f"  {r.tool:24} {r.median_seconds:8.4f} s  quality {r.quality:5.3f} ({r.source})  pass "
                f"{r.pass_rate:5.2f}  PSNR {psnr}  score α=0 {s0:.3f}  α=2 {s2:.6f}"
            )
        for alpha in (0.0, 2.0):
            best = min(rows, key=lambda r: (score(r.median_seconds, r.quality, alpha), r.tool))
            lines.append(f"  α={alpha:g} picks {best.tool}")
    return lines


def format_report(results: Sequence[PairResult], skipped: Sequence[str], wall_seconds: float) -> str:
    head = (
        f"{'tool':24} {'subtask':22} {'role':12} {'n':>3} {'median s':>9} {'pass':>5} {'check q':>7} "
        f"{'quality':>7} {'source':6}  ground truth"
    )
    out = [head, "-" * len(head)]
    for r in results:
        truth = "" if r.mean_truth is None else f"{r.truth_name} {r.mean_truth:.2f}"
        if r.fallbacks:
            truth += f" (GT regions on {r.fallbacks} case(s))"
        out.append(
            f"{r.tool:24} {r.subtask:22} {r.role:12} {r.n:>3} {r.median_seconds:9.4f} {r.pass_rate:5.2f} "
            f"{statistics.fmean(r.qualities):7.2f} {r.quality:7.3f} {r.source:6}  {truth}"
        )
    failing = [r for r in results if r.failures]
    if failing:
        out.append("")
        out.append("first failure per row:")
        out.extend(f"  {r.tool} on {r.subtask} ({len(r.failures)}/{r.n}): {r.failures[0][:160]}" for r in failing)
    with_extra = [r for r in results if r.extra]
    if with_extra:
        out.append("")
        out.append("ground truth, median over cases:")
        for r in with_extra:
            names = dict.fromkeys(name for case in r.extra for name, _ in case)
            parts = [
                f"{name} {statistics.median(v for case in r.extra for n, v in case if n == name):.3f}" for name in names
            ]
            out.append(f"  {r.tool} on {r.subtask}: " + ", ".join(parts))
    trade = _removal_tradeoff(results)
    if trade:
        out.append("")
        out.extend(trade)
    if skipped:
        out.append("")
        out.append("not measured:")
        out.extend(f"  {s}" for s in skipped)
    out.append("")
    out.append(f"{len(results)} rows measured in {wall_seconds:.1f} s")
    return "\n".join(out)


def run_tools_bench(
    cases: int = 12,
    seed: int = 0,
    write: bool = False,
    csv_path: Path | str | None = None,
    services: Services | None = None,
    tools: Sequence[str] | None = None,
) -> str:
    """Measure every ready embedded tool × subtask on `cases` synthetic cases and return a report.

    Args:
        cases: synthetic cases per (tool, subtask); each subtask's cases are shared by the tools serving it.
        seed: seed of the case generator.
        write: rewrite the benchmark CSV: measured rows get the median seconds, the graded quality, the pass rate,
            source=truth or check and n=cases; every other line is kept byte for byte.
        csv_path: the CSV to rewrite (default tool_tables/benchmark.csv).
        services: the services to take tools, tables and the OCR reader from (default: a new `Services()`).
        tools: measure only these tool ids (default all); with `write`, only their rows are rewritten.

    Raises:
        ValueError: `cases` < 1.
    """
    if cases < 1:
        raise ValueError(f"cases must be at least 1, got {cases}")
    t_start = time.perf_counter()
    services = services or Services()
    pairs, skipped = measurable_pairs(services, tools)
    run = _Run(services, CheckContext(reader=services.reader), seed)
    for kind in dict.fromkeys(k for _, k in pairs):
        run.cases[kind] = make_cases(kind, cases, seed)
    text_cases = [cs[0] for cs in run.cases.values() if cs[0].text is not None]
    if text_cases:
        services.reader.read(text_cases[0].image)  # load the OCR models and warm onnxruntime up, untimed
    results = []
    for tool_id, kind in pairs:
        results.append(_measure(run, tool_id, kind))
        log.info("measured %s on %s", tool_id, kind)
    report = format_report(results, skipped, time.perf_counter() - t_start)
    if write:
        path = Path(csv_path) if csv_path is not None else TABLES_DIR / BENCHMARK_FILE
        _write_csv(path, results)
        report += f"\nwrote {len(results)} measured rows to {path}"
    return report


#: Text subtasks measured per sign style by `--variants`.
VARIANT_KINDS: tuple[str, ...] = ("text_replacement", "text_removal", "text_redaction", "keyword_highlighting")


def run_variants_bench(
    cases: int = 12, seed: int = 0, services: Services | None = None, tools: Sequence[str] | None = None
) -> str:
    """Measure the text tools on every sign style (`costa.synthetic.sign_styles`) and return a pass-rate table.

    For each style the same scene seeds are drawn in that style; detection runs first on each case (as in the main
    run), the editors start from what it found (ground-truth regions where it missed). Rows are (tool, subtask),
    columns styles, cells the share of cases whose score reaches the search's threshold; a last row per subtask gives
    the best tool's rate, which is what the search can reach.
    """
    from costa.synthetic.sign_styles import SIGN_STYLES

    if cases < 1:
        raise ValueError(f"cases must be at least 1, got {cases}")
    t_start = time.perf_counter()
    services = services or Services()
    pairs, _ = measurable_pairs(services, tools)
    pairs = [p for p in pairs if p[1] in VARIANT_KINDS]
    rates: dict[tuple[str, str], dict[str, float]] = {}
    failures: dict[tuple[str, str, str], str] = {}
    warmed = False
    for style in SIGN_STYLES:
        run = _Run(services, CheckContext(reader=services.reader), seed)
        for kind in dict.fromkeys(k for _, k in pairs):
            run.cases[kind] = make_cases(kind, cases, seed, style=style)
            if not warmed:
                services.reader.read(run.cases[kind][0].image)
                warmed = True
        for tool_id, kind in pairs:
            result = _measure(run, tool_id, kind)
            rates.setdefault((tool_id, kind), {})[style] = result.pass_rate
            if result.failures:
                failures[(tool_id, kind, style)] = result.failures[0]
    width = max((len(f"{t} on {k}") for t, k in rates), default=10) + 2
    head = "".ljust(width) + "".join(s.rjust(20) for s in SIGN_STYLES)
    out = [f"text tools per sign style: pass rate over {cases} cases each (seed {seed})", head]
    for kind in VARIANT_KINDS:
        rows = [(t, k) for t, k in rates if k == kind]
        if not rows:
            continue
        for t, k in rows:
            out.append(f"{t} on {k}".ljust(width) + "".join(f"{rates[(t, k)][s]:20.2f}" for s in SIGN_STYLES))
        best = [max(rates[r][s] for r in rows if "text_regions" not in services.tables.tools[r[0]].outputs or
                    len(rows) == 1) for s in SIGN_STYLES]  # fmt: skip
        out.append(f"  best editor on {kind}".ljust(width) + "".join(f"{b:20.2f}" for b in best))
    if failures:
        out.append("")
        out.append("first failure per (tool, subtask, style):")
        out.extend(f"  {t} on {k} [{s}]: {why[:160]}" for (t, k, s), why in failures.items())
    out.append("")
    out.append(f"{len(rates)} rows × {len(SIGN_STYLES)} styles measured in {time.perf_counter() - t_start:.1f} s")
    return "\n".join(out)


HELP = "measure every ready embedded tool on synthetic cases; --write regenerates tool_tables/benchmark.csv"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare this benchmark's options."""
    p.add_argument("--cases", type=int, default=12, help="synthetic cases per tool × subtask")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--write", action="store_true", help="rewrite tool_tables/benchmark.csv with measured rows")
    p.add_argument("--tools", help="comma-separated tool ids to measure (default: every ready embedded tool)")
    p.add_argument(
        "--variants",
        action="store_true",
        help="measure the text tools per sign style (light on dark, saturated, outlined, shadowed, on a photo)",
    )


def run(args: argparse.Namespace) -> int:
    """Validate `--tools`, run, print the report."""
    from costa.errors import InputError
    from costa.tables import load_tables

    tools = [t.strip() for t in args.tools.split(",") if t.strip()] if args.tools else None
    if tools is not None:
        unknown = sorted(set(tools) - set(load_tables().tools))
        if unknown or not tools:
            raise InputError(f"--tools names no known tool: {', '.join(unknown) or args.tools!r}")
    if args.variants:
        if args.write:
            raise InputError("--variants measures sign styles only; it cannot --write the benchmark table")
        print(run_variants_bench(cases=args.cases, seed=args.seed, tools=tools))
        return 0
    print(run_tools_bench(cases=args.cases, seed=args.seed, write=args.write, tools=tools))
    return 0
