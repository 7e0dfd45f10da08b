"""The planner benchmark: reading CoSTA*'s reference plan files, and a full run on ../shared/benchmarks."""

from __future__ import annotations

import pytest

from bench.planner import (
    TARGETS,
    format_planner_report,
    parse_reference_entry,
    reference_orderings,
    run_planner_bench,
)
from costa.tables import load_tables
from tests.conftest import SHARED_BENCHMARKS

NAMES = {s.name.casefold(): s.id for s in load_tables().subtasks.values()}


def test_reference_entries_become_records() -> None:
    assert parse_reference_entry("Object Recoloration (Leaves -> Red Leaves) (4)", NAMES) == (
        "object_recoloration",
        "leaves",
        "red leaves",
    )
    assert parse_reference_entry("Outpainting ()(1)", NAMES) == ("outpainting", None, None)
    assert parse_reference_entry("Outpainting (1)", NAMES) == ("outpainting", None, None)
    with pytest.raises(ValueError, match="unknown subtask name"):
        parse_reference_entry("Teleportation (Cat) (2)", NAMES)


def test_tree_files_give_one_ordering_per_leaf() -> None:
    tree = [
        {"subtask": "Outpainting (1)", "parent": []},
        {"subtask": "Object Segmentation (Dog) (2)", "parent": ["Outpainting (1)"]},
        {"subtask": "Object Detection (Person) (3)", "parent": ["Object Segmentation (Dog) (2)"]},
        {"subtask": "Object Detection (Person) (2)", "parent": ["Outpainting (1)"]},
        {"subtask": "Object Segmentation (Dog) (3)", "parent": ["Object Detection (Person) (2)"]},
    ]
    assert [[k for k, _, _ in o] for o in reference_orderings(tree, NAMES)] == [
        ["outpainting", "object_segmentation", "object_detection"],
        ["outpainting", "object_detection", "object_segmentation"],
    ]


def test_missing_data_is_reported_not_crashed(tmp_path) -> None:
    report = run_planner_bench(tmp_path, warmup=False)
    assert report.sets == () and "no benchmark data" in format_planner_report(report)


def test_benchmark_on_the_shared_data() -> None:
    if not (SHARED_BENCHMARKS / "mteditbench_prompts").is_dir():
        pytest.skip(f"no benchmark data under {SHARED_BENCHMARKS}")
    report = run_planner_bench(SHARED_BENCHMARKS)
    every = [o for _, outs in report.sets for o in outs]
    assert len(every) > 4000 and not [o for o in every if o.status == "crash"]
    assert all(o.reasons for o in every if o.status != "full")  # nothing unplanned goes unexplained
    assert {r.reference for r in report.references} == {"Chain.json", "Tree.json"}
    for r in report.references:
        assert r.same_subtasks and r.same_targets and r.results_match
        # the reference's own order, or it with analysis moved before generation (planner rule 7), nothing else
        assert r.order_index is not None or r.analysis_first_index is not None, r
    text = format_planner_report(report)
    assert "crashes: 0" in text and "EditEval per category" in text
    for name, outs in report.sets:  # the targets for the fully planned share
        assert sum(o.status == "full" for o in outs) / len(outs) >= TARGETS[name], name
    suites = {r.name: r for r in report.suites}
    assert suites["dev"].share >= 0.95 and "held-out" in suites


def test_a_reference_ordering_with_analysis_moved_before_generation() -> None:
    from bench.planner import _analysis_first

    out, seg, det, rec = (
        ("outpainting", None, None),
        ("object_segmentation", "dog", None),
        ("object_detection", "person", None),
        ("recoloration", "leaves", "red leaves"),
    )
    assert _analysis_first((out, seg, rec, det)) == (seg, det, out, rec)  # the analyses jump, the rest keeps order
    assert _analysis_first((seg, out, rec)) == (seg, out, rec)  # already first: unchanged
    assert _analysis_first((rec, seg)) == (rec, seg)  # nothing invents: unchanged
