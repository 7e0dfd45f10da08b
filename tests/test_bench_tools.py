"""The tools benchmark: the CSV rewrite is exact, and a real run measures every ready embedded tool."""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import pytest

from bench.edit import EditRun, format_report, make_edit_image
from bench.tools import PairResult, rewrite_benchmark_csv, run_tools_bench
from costa.services import Services
from costa.tables import BENCHMARK_FILE, SUBTASKS_FILE, TABLES_DIR, TOOLS_FILE, load_tables


def _rows(path: Path) -> dict[tuple[str, str], bytes]:
    """(tool, subtask) → the raw line with its line ending, for byte-level comparisons."""
    out = {}
    for line in path.read_bytes().splitlines(keepends=True)[1:]:
        row = next(csv.reader(io.StringIO(line.decode("utf-8"))))
        out[(row[0], row[1])] = line
    return out


def test_rewrite_replaces_only_measured_rows_byte_for_byte() -> None:
    head = "tool,subtask,seconds,quality,pass_rate,source,n\r\n"
    text = head + "a,x,0.1,0.9,,estimate,0\r\nb,y,12.1,0.97,,paper,0\r\n"
    r = PairResult("a", "x", "final", seconds=(0.00001, 0.00003, 0.00002), qualities=(1.0, 0.5, 0.9))
    new = rewrite_benchmark_csv(text, [r])
    # no ground truth: quality is the mean check quality (0.8), the pass rate 2/3, the source "check"
    assert new == head + "a,x,0.0001,0.8,0.667,check,3\r\nb,y,12.1,0.97,,paper,0\r\n"
    graded = PairResult("a", "x", "final", (0.1, 0.1), (1.0, 1.0), grades=(0.9, 0.7))
    assert rewrite_benchmark_csv(text, [graded]).splitlines()[1] == "a,x,0.1,0.8,1,truth,2"
    with pytest.raises(ValueError, match="no benchmark rows"):
        rewrite_benchmark_csv(text, [PairResult("c", "z", "final", (1.0,), (1.0,))])
    with pytest.raises(ValueError, match="header"):
        rewrite_benchmark_csv("tool,seconds\n", [r])


def test_pair_result_statistics() -> None:
    r = PairResult("t", "s", "final", (0.3, 0.1, 0.2, 5.0), (0.8, 0.79, 1.0, 0.0), truth_name="PSNR dB",
                   truth=(30.0, float("inf"), 20.0))  # fmt: skip
    assert r.n == 4 and r.median_seconds == pytest.approx(0.25) and r.pass_rate == 0.5
    assert r.mean_truth == pytest.approx(25.0)


def test_edit_bench_image_and_report() -> None:
    image, _ = make_edit_image()
    assert image.shape == (576, 768, 3)
    runs = [
        EditRun(False, 4.0, 0, 2.0, 0.5, 2, True, False),
        EditRun(True, 8.0, 0, 6.0, 4.5, 5, True, False),
        EditRun(False, 5.0, 3, None, None, None, False, True, error="boom"),
        EditRun(True, 9.0, 0, 7.0, 5.0, 5, True, False),
    ]
    report = format_report(runs, "test")
    assert "lazy / eager median wall time: 0.53" in report
    assert "1/2" in report and "2/2" in report and "boom" in report


@pytest.mark.slow
def test_run_tools_bench_writes_a_loadable_table(tmp_path: Path) -> None:
    for name in (SUBTASKS_FILE, TOOLS_FILE, BENCHMARK_FILE):
        shutil.copy(TABLES_DIR / name, tmp_path / name)
    project_table = (TABLES_DIR / BENCHMARK_FILE).read_bytes()
    old_rows = _rows(tmp_path / BENCHMARK_FILE)
    report = run_tools_bench(cases=2, seed=0, write=True, csv_path=tmp_path / BENCHMARK_FILE)
    assert "rows measured" in report and "remove_patchmatch" in report
    assert (TABLES_DIR / BENCHMARK_FILE).read_bytes() == project_table, "the project's table was touched"
    tables = load_tables(tmp_path)
    new_rows = _rows(tmp_path / BENCHMARK_FILE)
    assert old_rows.keys() == new_rows.keys()
    services = Services(tables=tables)
    # A ready tool whose optional package is missing here (realesrgan) is skipped by the bench, its row kept.
    ready = {t.id for t in tables.tools.values() if t.backend == "embedded" and services.why_not(t.id) is None}
    assert ready, "no ready embedded tools to measure"
    old = load_tables().benchmark
    for key, row in tables.benchmark.items():
        if key[0] in ready and old[key].source != "real":  # rows measured on real photos are never replaced
            assert row.source in ("truth", "check") and row.n == 2, key
            assert row.pass_rate is not None
            assert new_rows[key][-1:] == old_rows[key][-1:], "the line ending changed"
            assert row.seconds >= 1e-4 and 0.0 <= row.quality <= 1.0
        else:
            assert new_rows[key] == old_rows[key], f"row {key} changed"


def test_recolour_truth_measures_colour_shading_and_outside() -> None:
    import numpy as np

    from bench.tools import recolour_truth
    from costa.colours import parse_colour
    from costa.synthetic.cases import make_cases

    case = make_cases("object_recoloration", 1, seed=3)[0]
    unchanged = dict(recolour_truth(case, case.image))
    mask = case.gt_mask().data
    target = np.array(case.subtask.params.get("rgb") or parse_colour(case.subtask.result), dtype=np.uint8)
    flat = case.image.copy()
    flat[mask] = target  # right colour, shading destroyed
    painted = dict(recolour_truth(case, flat))
    assert unchanged["median ΔE2000"] > 10 and unchanged["outside SSIM"] == pytest.approx(1.0)
    assert painted["median ΔE2000"] < 1.0
    assert painted.get("shading corr", 0.0) < 0.9
    damaged = flat.copy()
    damaged[~mask] = 255 - damaged[~mask]
    assert dict(recolour_truth(case, damaged))["outside SSIM"] < 0.9


@pytest.mark.extras
def test_the_optional_upscaler_is_measured_when_installed(tmp_path: Path) -> None:
    why = Services().why_not("realesrgan")
    if why is not None:
        pytest.skip(f"the realesrgan extra is not installed here: {why}")
    for name in (SUBTASKS_FILE, TOOLS_FILE, BENCHMARK_FILE):
        shutil.copy(TABLES_DIR / name, tmp_path / name)
    report = run_tools_bench(cases=1, seed=0, write=True, csv_path=tmp_path / BENCHMARK_FILE, tools=["realesrgan"])
    row = load_tables(tmp_path).benchmark[("realesrgan", "image_upscaling")]
    assert "realesrgan" in report and row.source == "truth" and row.n == 1
