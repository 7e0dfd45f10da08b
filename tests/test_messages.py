"""Messages for people: what this build cannot do in one plain sentence; the technical detail only when asked."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from costa.messages import plain_unavailable
from costa.tables import load_tables

ROOT = Path(__file__).resolve().parents[1]


def test_every_kind_without_an_embedded_tool_has_a_plain_sentence() -> None:
    tables = load_tables()
    for kind in ("object_addition", "object_replacement", "changing_scenery", "image_captioning", "landmark_detection"):
        said = plain_unavailable(tables, kind)
        assert said.endswith(".") and len(said) < 260 and "COSTA_MODELS_DIR" not in said, said
    assert "Stable Diffusion" in plain_unavailable(tables, "object_addition")
    assert "OPENAI_BASE_URL" in plain_unavailable(tables, "landmark_detection")


def test_the_cli_says_it_plainly_and_the_detail_with_v(tmp_path: Path) -> None:
    def edit(*extra: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "costa", "edit", str(ROOT / "assets" / "red_ball.png"), "swap the ball for a dog",
               "-o", str(tmp_path / "out.png"), "--no-reflect", *extra]  # fmt: skip
        env = {"COSTA_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
        return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env, timeout=120)

    plain = edit()
    assert plain.returncode == 2 and not (tmp_path / "out.png").exists()
    assert "Replacing an object needs a neural model" in plain.stdout + plain.stderr
    assert "COSTA_MODELS_DIR" not in plain.stdout + plain.stderr
    verbose = edit("-v")
    assert "COSTA_MODELS_DIR" in verbose.stdout + verbose.stderr  # which weights, where: only when asked


def test_a_partly_done_edit_warns_plainly_about_the_part_not_done(tmp_path: Path) -> None:
    """'upscale … and add a red car': the upscaling is written (exit 3, partial) and the warning about the car was
    the tool's whole technical reason (weights, COSTA_MODELS_DIR, the hub cache, CUDA); now the plain sentence, the
    detail with -v."""

    def edit(*extra: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "costa", "edit", str(ROOT / "assets" / "red_ball.png"),
               "make the image brighter and add a red car on the road", "-o", str(tmp_path / "out.png"),
               "--no-reflect", "--accept-unverified", *extra]  # fmt: skip
        env = {"COSTA_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
        return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env, timeout=120)

    plain = edit()
    assert plain.returncode == 3 and (tmp_path / "out.png").exists(), plain.stderr
    warning = next(line for line in plain.stderr.splitlines() if "was not done" in line)
    assert "Adding an object needs a neural model" in warning and "COSTA_MODELS_DIR" not in plain.stderr, warning
    verbose = edit("-v")
    warning = next(line for line in verbose.stderr.splitlines() if "was not done" in line)
    assert "COSTA_MODELS_DIR" in warning
