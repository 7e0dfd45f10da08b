"""The Ray runner's table and choice, without Ray: tool_tables/deployments.csv against tools.yaml, its errors naming
file, line and value, COSTA_RUNNER's validation, `costa serve --help`, and Ray never imported unless asked for."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from costa.config import Settings
from costa.errors import InputError, TableError
from costa.models.deployments import (
    DEPLOYMENTS_COLUMNS,
    check_families,
    cpu_layout,
    is_served,
    load_deployments,
    parse_deployments,
)
from costa.models.runner import IN_PROCESS, InProcessRunner, make_runner
from costa.tables import load_tables

ROOT = Path(__file__).resolve().parents[1]
HEADER = ",".join(DEPLOYMENTS_COLUMNS)


def test_the_shipped_table_agrees_with_tools_yaml() -> None:
    """One row per family both ways; families with a neural tool are served, the others stay in process."""
    tables, rows = load_tables(), load_deployments()
    check_families(rows, tables.tools)
    for family, row in rows.items():
        neural = any(t.backend == "neural" for t in tables.tools.values() if t.family == family)
        assert row.served == neural, f"{family}: served={row.served} but has a neural tool: {neural}"
    # the ready served families fit one GPU (the 4-GPU layout is the README's table)
    ready = {t.family for t in tables.tools.values() if t.status == "ready" and is_served(t, rows)}
    assert sum(rows[f].gpus for f in ready) <= 1.0
    # an api tool of a served family runs in process (a request to an endpoint, no model here)
    assert rows["stable_diffusion"].served and not is_served(tables.tools["sd_erase"], rows)
    assert is_served(tables.tools["sd_inpaint"], rows)


def test_the_4_gpu_layout_agrees_with_tools_yaml_and_fits_four_gpus() -> None:
    """tool_tables/deployments_4gpu.csv, the README's 4-GPU table: the same families, 3.85 GPUs for the ready ones."""
    from costa.tables import TABLES_DIR

    tables, rows = load_tables(), load_deployments(TABLES_DIR / "deployments_4gpu.csv")
    check_families(rows, tables.tools, "deployments_4gpu.csv")
    assert {f for f, r in rows.items() if r.served} == {f for f, r in load_deployments().items() if r.served}
    ready = {t.family for t in tables.tools.values() if t.status == "ready" and is_served(t, rows)}
    assert round(sum(rows[f].gpus for f in ready), 6) == 3.85
    assert (rows["stable_diffusion"].replicas, rows["stable_diffusion"].gpu_fraction) == (4, 0.5)


def test_the_cpu_layout_serves_what_it_names_and_keeps_every_family() -> None:
    """The benchmarks' and tests' GPU-less layout: the named families served with one replica of the given CPUs,
    the rest in process, still one row per family of tools.yaml; a misspelt family is refused by name."""
    tables, rows = load_tables(), load_deployments()
    layout = parse_deployments(cpu_layout(rows, ("adjust", "text_edit"), 0.25, "bench"))
    check_families(layout, tables.tools)
    assert {f for f, r in layout.items() if r.served} == {"adjust", "text_edit"}
    assert (layout["adjust"].replicas, layout["adjust"].cpus, layout["adjust"].gpus) == (1, 0.25, 0.0)
    assert layout["sam"].placement == "in_process" and layout["sam"].note == "bench"
    with pytest.raises(TableError, match="adjst"):
        cpu_layout(rows, ("adjst",), 0.25, "bench")


def test_families_batch_exactly_where_a_tool_of_theirs_runs_several_calls_in_one_pass() -> None:
    """Both ways, in both shipped layouts: a served row asks for batches (max_batch > 1) only when one of its ready
    tools' classes batches (`Tool.batches`: run_batch is one pass of the model), and every such family does."""
    from costa.tables import TABLES_DIR
    from costa.tools import tool_class

    tables = load_tables()
    batching = {t.family for t in tables.tools.values() if t.status == "ready" and tool_class(t).batches}
    assert batching == {"clip", "blip", "grounding_dino", "detr", "sam", "depth"}
    for name in ("deployments.csv", "deployments_4gpu.csv"):
        rows = load_deployments(TABLES_DIR / name)
        assert {f for f, r in rows.items() if r.max_batch > 1} == batching, name
        assert all(0 < rows[f].batch_wait_s <= 0.05 for f in batching), name  # a short wait: a caller waits it
        # on CPUs only the families whose batch was measured to pay there (README, "Batching": CLIP 0.55×, BLIP
        # 0.57× per call; the vision models 0.98–1.39×)
        assert {f for f, r in rows.items() if r.cpu_max_batch > 1} == {"clip", "blip"}, name


def test_a_family_missing_or_unknown_is_named() -> None:
    tables, rows = load_tables(), dict(load_deployments())
    del rows["sam"]
    with pytest.raises(TableError, match=r"deployments.csv: no row for tool family sam"):
        check_families(rows, tables.tools)
    rows["sam"] = load_deployments()["sam"]
    rows["dalle"] = load_deployments()["sam"]
    with pytest.raises(TableError, match=r"family dalle not in tools.yaml"):
        check_families(rows, tables.tools)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("sam,serve,0,0.2,1,,,,x", r"t.csv line 2 \('sam'\): replicas must be in \[1, 64\], got '0'"),
        ("sam,serve,two,0.2,1,,,,x", r"t.csv line 2 \('sam'\): replicas must be a whole number, got 'two'"),
        ("sam,serve,1,1.5,1,,,,x", r"t.csv line 2 \('sam'\): gpu_fraction must be in \[0, 1\], got '1.5'"),
        ("sam,serve,1,,1,,,,x", r"t.csv line 2 \('sam'\): a served row needs gpu_fraction"),
        ("sam,remote,1,0.2,1,,,,x", r"t.csv line 2 \('sam'\): placement must be serve or in_process, got 'remote'"),
        ("ocr,in_process,1,,,,,,x", r"t.csv line 2 \('ocr'\): an in_process row takes no resources, got replicas='1'"),
        ("ocr,in_process,,,,4,,,x", r"t.csv line 2 \('ocr'\): an in_process row takes no resources, got max_batch='4'"),
        ("clip,serve,1,0.1,1,0,,,x", r"t.csv line 2 \('clip'\): max_batch must be in \[1, 256\], got '0'"),
        ("clip,serve,1,0.1,1,8.5,,,x", r"t.csv line 2 \('clip'\): max_batch must be a whole number, got '8.5'"),
        ("clip,serve,1,0.1,1,8,,-1,x", r"t.csv line 2 \('clip'\): batch_wait_ms must be in \[0, 10000\], got '-1'"),
        ("clip,serve,1,0.1,1,8,0,,x", r"t.csv line 2 \('clip'\): cpu_max_batch must be in \[1, 256\], got '0'"),
        (
            "ocr,in_process,,,,,2,,x",
            r"t.csv line 2 \('ocr'\): an in_process row takes no resources, got cpu_max_batch='2'",
        ),
        ("sam,serve,1,0.2", r"t.csv line 2: expected 9 columns"),
    ],
)
def test_bad_rows_name_file_line_and_value(line: str, message: str) -> None:
    with pytest.raises(TableError, match=message):
        parse_deployments(f"{HEADER}\n{line}\n", "t.csv")


def test_bad_header_and_duplicates_are_refused() -> None:
    with pytest.raises(TableError, match=r"t.csv: header must be family,placement"):
        parse_deployments("family,where\nsam,serve\n", "t.csv")
    with pytest.raises(TableError, match=r"t.csv line 3: duplicate family 'ocr'"):
        parse_deployments(f"{HEADER}\nocr,in_process,,,,,,,\nocr,in_process,,,,,,,\n", "t.csv")


@pytest.mark.parametrize("bad", ["rya", "ray:", "ray://", "ray://host", "ray://host:port", "ray://h:99999", "local"])
def test_costa_runner_with_a_bad_value_is_refused_naming_it(bad: str) -> None:
    with pytest.raises(InputError, match=rf"COSTA_RUNNER must be one of in_process, ray, ray://HOST:PORT, got '{bad}'"):
        Settings.from_env({"COSTA_RUNNER": bad})


def test_the_default_runner_is_in_process() -> None:
    settings = Settings.from_env({})
    assert settings.runner == IN_PROCESS and settings.runner_timeout_seconds == 600.0
    assert isinstance(make_runner(settings, load_tables()), InProcessRunner)
    assert Settings.from_env({"COSTA_RUNNER": "ray://gpu-box:10001"}).runner == "ray://gpu-box:10001"
    with pytest.raises(InputError, match="COSTA_RUNNER_TIMEOUT"):
        Settings.from_env({"COSTA_RUNNER_TIMEOUT": "soon"})


def test_costa_serve_help() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "costa", "serve", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert "usage: python -m costa serve" in out.stdout and "deployments.csv" in out.stdout
    assert "--cpu-only" in out.stdout and "COSTA_RUNNER=ray" in out.stdout


def _imported_after(code: str, env: dict[str, str]) -> bool:
    import os

    probe = f"{code}\nimport sys\nprint('ray' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True, env=os.environ | env
    )
    return out.stdout.strip().splitlines()[-1] == "True"


def test_choosing_the_ray_runner_imports_no_ray_until_it_is_used() -> None:
    """With COSTA_RUNNER=ray, building the services (and so the app) imports no ray: the runner connects on first
    use. Importing costa never does (tests/test_imports.py checks it with the other heavy modules)."""
    code = "from costa.services import Services\nprint(type(Services().runner).__name__)"
    assert not _imported_after(code, {"COSTA_RUNNER": "ray"})


def test_tool_finished_names_the_runner_and_old_stored_events_still_load() -> None:
    from costa.agent import run_turn
    from costa.eventlog import event_from_dict, event_to_dict
    from costa.events import ToolFinished
    from costa.services import Services
    from costa.turn.records import TurnConfig
    from costa.types import Plan, Subtask
    from tests.text_helpers import background

    plan = Plan(subtasks=(Subtask(id="s1", kind="global_adjustment", result="warmer"),))
    events = list(run_turn(Services(), background("flat", 96, 64), plan, TurnConfig(reflect=False)))
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert finished and all(e.runner == IN_PROCESS for e in finished)
    stored = event_to_dict(finished[0])
    assert stored["runner"] == IN_PROCESS
    del stored["runner"]  # an event stored before the field existed
    old = event_from_dict(stored)
    assert isinstance(old, ToolFinished) and old.runner == "" and old.tool == finished[0].tool
