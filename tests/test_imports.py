"""Importing costa, its CLI module or the app must not pull heavy ML libraries (they load lazily inside tools), nor
Ray (imported only when COSTA_RUNNER asks for it, on the runner's first use)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = (
    "torch", "diffusers", "transformers", "segment_anything", "onnxruntime", "rapidocr", "ai_edge_litert", "mediapipe",
    "ray",
)  # fmt: skip


def _loaded_after(code: str) -> set[str]:
    probe = f"{code}\nimport sys\nprint(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_import_costa_is_light() -> None:
    code = (
        "import costa, costa.agent, costa.cli, costa.search, costa.graph, costa.tables, costa.services, costa.checks,"
        " costa.planner, costa.models.runner, costa.models.ray_runner, costa.models.replica, costa.models.serving,"
        " costa.models.deployments"
    )
    assert _loaded_after(code) == set()


def test_building_the_app_is_light() -> None:
    code = "from costa.services import Services\nfrom ui.app import build_ui\nbuild_ui(Services())"
    assert _loaded_after(code) == set()


def test_doctor_is_light_until_a_tool_runs() -> None:
    code = "from costa.services import Services\nServices().readiness()"
    assert _loaded_after(code) == set()


def test_tool_modules_and_doctor_weights_are_light() -> None:
    code = (
        "import costa.tools.salient, costa.tools.selfie, costa.tools.blazeface, costa.tools.matting\n"
        "from costa.config import Settings\nfrom costa.models.weights import package_weights\n"
        "package_weights(Settings.from_env())"
    )
    assert _loaded_after(code) == set()
