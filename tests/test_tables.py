"""Tool tables: the committed tables load, and every kind of mistake is reported with file and row."""

from __future__ import annotations

import copy
import inspect
from pathlib import Path

import pytest
import yaml

from costa.errors import TableError
from costa.tables import TABLES_DIR, load_tables, parse_tables
from costa.tools import tool_class
from costa.tools.base import Tool

NAMES = ("subtasks.yaml", "tools.yaml", "benchmark.csv")
PAPER_SUBTASKS = {
    "Object Detection", "Object Segmentation", "Object Addition", "Object Removal", "Background Removal",
    "Landmark Detection", "Object Replacement", "Image Upscaling", "Image Captioning", "Changing Scenery",
    "Object Recoloration", "Outpainting", "Depth Estimation", "Image Deblurring", "Text Extraction",
    "Text Replacement", "Text Removal", "Text Addition", "Text Redaction", "Question Answering based on text",
    "Keyword Highlighting", "Sentiment Analysis", "Caption Consistency Check", "Text Detection",
}  # fmt: skip


@pytest.fixture(scope="module")
def docs() -> tuple[dict, dict, str]:
    return (
        yaml.safe_load((TABLES_DIR / "subtasks.yaml").read_text()),
        yaml.safe_load((TABLES_DIR / "tools.yaml").read_text()),
        (TABLES_DIR / "benchmark.csv").read_text(),
    )


def test_committed_tables_load_and_cover_all_24_subtasks() -> None:
    t = load_tables()
    names = {s.name for s in t.subtasks.values()}
    assert names >= PAPER_SUBTASKS
    for sid in t.subtasks:
        assert t.tools_for(sid), sid


def test_paper_rows_carry_the_paper_numbers() -> None:
    b = load_tables().benchmark
    assert (b[("grounding_dino", "object_recoloration")].seconds, b[("yolov7", "object_detection")].quality) == (
        0.119,
        0.82,
    )
    assert b[("sd_inpaint", "object_recoloration")].quality == 0.89
    assert b[("sd_inpaint", "object_replacement")].quality == 0.97
    assert b[("sd_search_recolor", "object_recoloration")].source == "paper"


def test_ready_embedded_tools_have_measured_rows() -> None:
    t = load_tables()
    for spec in t.ready_tools():
        if spec.backend != "embedded":  # neural and API rows stay paper/estimate until runs are recorded
            continue
        for s in spec.subtasks:
            row = t.benchmark[(spec.id, s)]
            assert row.source in ("truth", "check", "real") and row.n > 0, (spec.id, s)
            assert row.pass_rate is not None and 0.0 <= row.pass_rate <= 1.0, (spec.id, s)


def test_every_ready_tool_names_a_class_with_the_common_signature() -> None:
    t = load_tables()
    for spec in t.tools.values():
        # Every ready tool names a class (the table refuses one that does not); planned tools may name none.
        if spec.impl is None:
            assert spec.status != "ready", spec.id
            continue
        cls = tool_class(spec)
        assert issubclass(cls, Tool), spec.id
        # The call signature is the common one; what the tool reads is declared by the table's inputs.
        params = list(inspect.signature(cls.run).parameters)
        assert params == ["self", "state", "subtask", "params"], (spec.id, params)


def test_a_ready_tool_without_a_class_is_refused() -> None:
    docs = [yaml.safe_load((TABLES_DIR / n).read_text()) for n in NAMES[:2]]
    del docs[1]["tools"][0]["class"]
    with pytest.raises(TableError, match=r"rapidocr_detect.*must name its class"):
        parse_tables(docs[0], docs[1], (TABLES_DIR / NAMES[2]).read_text(), NAMES)


def test_a_class_that_does_not_exist_is_reported() -> None:
    from dataclasses import replace

    spec = replace(load_tables().tools["rapidocr_detect"], impl="costa.tools.ocr:NoSuchClass")
    with pytest.raises(TableError, match="no class 'NoSuchClass'"):
        tool_class(spec)


def test_param_retry_schedule() -> None:
    spec = load_tables().tools["remove_patchmatch"]
    assert spec.max_attempts == 3
    assert spec.params_for_attempt(0)["dilate"] == 5
    assert spec.params_for_attempt(1)["dilate"] == 9
    assert spec.params_for_attempt(2)["dilate"] == 15
    with pytest.raises(ValueError, match=r"attempts 0\.\.2"):
        spec.params_for_attempt(3)


def _bad(docs, mutate) -> str:
    sub, tools, bench = copy.deepcopy(docs[0]), copy.deepcopy(docs[1]), docs[2]
    out = mutate(sub, tools, bench)
    if out is not None:
        bench = out
    with pytest.raises(TableError) as e:
        parse_tables(sub, tools, bench, NAMES)
    return str(e.value)


def test_unknown_subtask_names_file_and_row(docs) -> None:
    def m(sub, tools, bench):
        tools["tools"][2]["subtasks"] = ["text_replacement", "make_coffee"]

    msg = _bad(docs, m)
    assert "tools.yaml row 3" in msg and "make_coffee" in msg


def test_unknown_artifact_type(docs) -> None:
    def m(sub, tools, bench):
        tools["tools"][0]["outputs"] = ["polygons"]

    msg = _bad(docs, m)
    assert "tools.yaml row 1" in msg and "polygons" in msg


def test_duplicate_tool_id(docs) -> None:
    def m(sub, tools, bench):
        tools["tools"].append(copy.deepcopy(tools["tools"][0]))

    assert "duplicate tool id 'rapidocr_detect'" in _bad(docs, m)


def test_in_region_is_for_image_wide_editors_a_target_may_limit(docs) -> None:
    def not_bool(sub, tools, bench):
        tools["tools"][0]["in_region"] = "yes"

    assert "'in_region' must be true or false, got 'yes'" in _bad(docs, not_bool)

    def on_ocr(sub, tools, bench):
        tools["tools"][0]["in_region"] = True  # rapidocr_detect serves text kinds, none image-wide

    msg = _bad(docs, on_ocr)
    assert "tools.yaml row 1" in msg and "'in_region' is for an image-wide editor" in msg
    t = load_tables()
    assert {s.id for s in t.tools.values() if s.in_region} >= {"global_adjust", "region_adjust", "unsharp_deblur"}


def test_missing_benchmark_row(docs) -> None:
    def m(sub, tools, bench):
        return "\n".join(line for line in bench.splitlines() if not line.startswith("sam,object_removal"))

    assert "missing benchmark row for tool 'sam' on subtask 'object_removal'" in _bad(docs, m)


def test_dangling_benchmark_reference(docs) -> None:
    def m(sub, tools, bench):
        return bench + "ghost_tool,text_removal,1.0,0.5,,paper,0\n"

    msg = _bad(docs, m)
    assert "benchmark.csv line" in msg and "ghost_tool" in msg


def test_benchmark_row_for_subtask_tool_does_not_serve(docs) -> None:
    def m(sub, tools, bench):
        return bench + "sam,text_removal,1.0,0.5,,paper,0\n"

    assert "does not serve subtask 'text_removal'" in _bad(docs, m)


def test_measured_row_needs_n(docs) -> None:
    def m(sub, tools, bench):
        lines = bench.splitlines()
        idx = next(i for i, line in enumerate(lines) if line.startswith("sam,object_segmentation"))
        lines[idx] = "sam,object_segmentation,0.05,1.0,1.0,truth,0"
        return "\n".join(lines)

    assert "measured against truth needs n > 0" in _bad(docs, m)


def test_measured_row_needs_its_pass_rate(docs) -> None:
    def m(sub, tools, bench):
        lines = bench.splitlines()
        idx = next(i for i, line in enumerate(lines) if line.startswith("sam,object_segmentation"))
        lines[idx] = "sam,object_segmentation,0.05,0.7,,check,20"
        return "\n".join(lines)

    assert "needs its pass_rate" in _bad(docs, m)


def test_unknown_quality_source_and_bad_pass_rate(docs) -> None:
    def source(sub, tools, bench):
        return bench.replace(
            "sam,object_segmentation,0.046,1.0,,paper,0", "sam,object_segmentation,0.046,1.0,,measured,3"
        )

    assert "source must be one of truth, check, real, paper, estimate" in _bad(docs, source)

    def rate(sub, tools, bench):
        return bench.replace(
            "sam,object_segmentation,0.046,1.0,,paper,0", "sam,object_segmentation,0.046,1.0,1.2,paper,0"
        )

    assert "pass_rate must be in [0, 1]" in _bad(docs, rate)


def test_quality_and_pass_rate_are_separate_columns() -> None:
    t = load_tables()
    row = t.benchmark[("sam", "object_segmentation")]
    assert row.source == "paper" and row.pass_rate is None and not row.measured
    measured = [r for r in t.benchmark.values() if r.measured]
    assert measured and all(r.pass_rate is not None for r in measured)


def test_quality_out_of_range(docs) -> None:
    def m(sub, tools, bench):
        return bench.replace("sam,object_segmentation,0.046,1.0", "sam,object_segmentation,0.046,1.5")

    assert "quality must be in [0, 1]" in _bad(docs, m)


def test_subtask_without_tool(docs) -> None:
    def m(sub, tools, bench):
        sub["subtasks"].append({"id": "teleport", "name": "Teleport", "produces": "image", "edits_image": True})

    assert "subtask 'teleport' has no tool" in _bad(docs, m)


def test_unknown_status_and_backend(docs) -> None:
    def m(sub, tools, bench):
        tools["tools"][1]["status"] = "beta"

    assert "status must be ready or planned" in _bad(docs, m)


def test_load_tables_names_missing_file(tmp_path: Path) -> None:
    with pytest.raises(TableError, match=r"subtasks\.yaml: cannot read"):
        load_tables(tmp_path)


def test_subtask_categories_come_from_the_table() -> None:
    from costa.planner.validate import CREATING_KINDS, OBJECT_KINDS, TEXT_READ_KINDS
    from costa.tables import KindSet, load_subtasks

    subtasks = load_subtasks()
    assert set(OBJECT_KINDS) == {k for k, s in subtasks.items() if s.target == "object"}
    assert set(CREATING_KINDS) == {"object_replacement", "object_addition"}
    # One definition of "reads text" everywhere (it used to be 2 kinds in one module and 4 in another).
    reads = {"text_detection", "text_extraction", "question_answering_text", "sentiment_analysis"}
    assert set(TEXT_READ_KINDS) == reads
    assert set(KindSet("runs_first")) | {"x"} == {"outpainting", "x"}
    with pytest.raises(TableError, match="no column 'readz_text'"):
        KindSet("readz_text")


def test_a_misspelt_subtask_column_is_refused() -> None:
    docs = [yaml.safe_load((TABLES_DIR / n).read_text()) for n in NAMES[:2]]
    docs[0]["subtasks"][0]["reads_txt"] = True
    with pytest.raises(TableError, match=r"unknown keys \['reads_txt'\]"):
        parse_tables(docs[0], docs[1], (TABLES_DIR / NAMES[2]).read_text(), NAMES)
    docs[0]["subtasks"][0].pop("reads_txt")
    docs[0]["subtasks"][0]["reads_text"] = "yes"
    with pytest.raises(TableError, match="reads_text must be true or false"):
        parse_tables(docs[0], docs[1], (TABLES_DIR / NAMES[2]).read_text(), NAMES)


def _parameters_read(module_name: str) -> set[str]:
    """Names a tool module reads from its attempt parameters: `float_param(params, "x")` (and int/str/bool),
    `params.get("x")`, `params["x"]`."""
    import ast
    import importlib

    module = importlib.import_module(module_name)
    tree = ast.parse(inspect.getsource(module))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
            func = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            if func in ("float_param", "int_param", "str_param", "bool_param"):
                found.add(node.args[1].value)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "params"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            found.add(node.args[0].value)
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == "params"
            and isinstance(node.slice, ast.Constant)
        ):
            found.add(node.slice.value)
    return found


def test_every_parameter_read_is_declared_and_every_declared_one_is_read() -> None:
    """Both ways, per tool module: a misspelt name in the table or in the code fails here, not silently at run time."""
    tables = load_tables()
    by_module: dict[str, list] = {}
    for spec in tables.tools.values():
        if spec.impl is not None:
            by_module.setdefault(spec.impl.partition(":")[0], []).append(spec)
    for module_name, specs in by_module.items():
        read = _parameters_read(module_name)
        declared = {p.name for s in specs for p in s.params}
        assert read <= declared, f"{module_name} reads undeclared parameters {sorted(read - declared)}"
        for s in specs:
            unread = {p.name for p in s.params} - read
            assert not unread, f"{s.id} declares parameters its module never reads: {sorted(unread)}"
        for s in specs:
            for p in s.params:
                assert p.type is not None, f"{s.id}.{p.name} has no type"


def test_parameter_declarations_are_validated() -> None:
    docs = [yaml.safe_load((TABLES_DIR / n).read_text()) for n in NAMES[:2]]
    bench = (TABLES_DIR / NAMES[2]).read_text()
    row = next(r for r in docs[1]["tools"] if r["id"] == "recolor_lab")
    row["params"]["strength"]["defualt"] = 1.0
    with pytest.raises(TableError, match=r"strength.*unknown keys \['defualt'\]"):
        parse_tables(docs[0], docs[1], bench, NAMES)
    del row["params"]["strength"]["defualt"]
    row["params"]["strength"]["retries"] = [5]
    with pytest.raises(TableError, match=r"'strength' retry: strength=5 is outside \[0.0, 1.0\]"):
        parse_tables(docs[0], docs[1], bench, NAMES)
    row["params"]["strength"]["retries"] = [1.0]
    del row["params"]["strength"]["type"]
    with pytest.raises(TableError, match="'strength' of a ready tool needs a 'type'"):
        parse_tables(docs[0], docs[1], bench, NAMES)


def test_a_tool_call_fills_defaults_and_refuses_values_outside_the_declaration() -> None:
    import numpy as np

    from costa.errors import InputError
    from costa.types import EditState, Subtask

    spec = load_tables().tools["global_adjust"]
    tool = tool_class(spec)(spec)
    image = np.full((20, 20, 3), 100, np.uint8)
    sub = Subtask(id="s1", kind="global_adjustment", result="brighter")
    assert tool(EditState(image), sub, {}).image.mean() > 100  # the default amount (0 = from the words) filled in
    with pytest.raises(InputError, match=r"amount=5 is outside \[0, 1\]"):
        tool(EditState(image), sub, {"amount": 5})
    with pytest.raises(InputError, match="has no parameter 'amont'"):
        tool(EditState(image), sub, {"amont": 0.2})


def test_planned_tools_say_why_and_ready_ones_do_not() -> None:
    """Both ways: every planned row carries its exact reason (shown by `costa doctor`), no ready row carries one."""
    from costa.services import Services

    tables = load_tables()
    services = Services()
    for spec in tables.tools.values():
        if spec.status == "planned":
            assert len(spec.planned_reason) > 40, spec.id
            assert services.why_not(spec.id).startswith(f"planned: {spec.planned_reason}"), spec.id
        else:
            assert spec.planned_reason == "", spec.id
    docs = [yaml.safe_load((TABLES_DIR / n).read_text()) for n in NAMES[:2]]
    bench = (TABLES_DIR / NAMES[2]).read_text()
    row = next(r for r in docs[1]["tools"] if r["id"] == "yolov7")
    reason = row.pop("planned_reason")
    with pytest.raises(TableError, match=r"'yolov7'.*planned tool must say in 'planned_reason'"):
        parse_tables(docs[0], docs[1], bench, NAMES)
    row["planned_reason"] = reason
    next(r for r in docs[1]["tools"] if r["id"] == "box_crop")["planned_reason"] = "not really"
    with pytest.raises(TableError, match=r"'box_crop'.*ready tool has no 'planned_reason'"):
        parse_tables(docs[0], docs[1], bench, NAMES)
