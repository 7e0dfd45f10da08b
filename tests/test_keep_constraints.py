"""Constraint clauses ("… and keep the trees unchanged", "…, keeping the background sharp") through the CLI as a
subprocess, on generated images: the edit is planned and run, what is kept is located first and stays exactly as it
was, and a kept thing no tool can locate is reported, never silently dropped."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from costa.planner import plan_with_rules
from tests.test_cli import costa

#: (y0, y1, x0, x1) of the red square and the "cat" box in the generated image.
SQUARE = (20, 60, 20, 60)
CAT = (70, 110, 110, 170)


@pytest.fixture
def scene(tmp_path: Path) -> Path:
    img = np.full((120, 200, 3), 110, np.uint8)
    img[:, :, 2] = 150
    y0, y1, x0, x1 = SQUARE
    img[y0:y1, x0:x1] = (210, 25, 25)
    y0, y1, x0, x1 = CAT
    yy, xx = np.mgrid[y0:y1, x0:x1]
    img[y0:y1, x0:x1] = np.stack([90 + (xx - x0), 80 + (yy - y0), 60 + 0 * xx], axis=2)  # a textured "cat"
    p = tmp_path / "scene.png"
    Image.fromarray(img).save(p)
    return p


def _img(path: Path) -> np.ndarray:
    return np.asarray(Image.open(path).convert("RGB")).astype(int)


def test_the_two_reported_constraint_phrasings_plan_the_edit_and_what_it_keeps() -> None:
    sky = plan_with_rules("make the sky blue and keep the trees unchanged")
    assert [(s.kind, s.target, s.result) for s in sky.subtasks] == [
        ("object_segmentation", "trees", None),
        ("object_recoloration", "sky", "blue"),
    ]
    assert sky.subtasks[0].params["role"] == "keep" and sky.subtasks[1].params["keep"] == ["trees"]
    cat = plan_with_rules("brighten the cat, keeping the background sharp")
    assert [(s.kind, s.target, s.result, s.params.get("keep")) for s in cat.subtasks] == [
        ("global_adjustment", "cat", "brighter", ["background"])
    ]
    assert not sky.unsupported and not cat.unsupported
    resized = plan_with_rules("upscale the photo 2x and keep the logo as it is")
    assert [s.kind for s in resized.subtasks] == ["image_upscaling"] and "logo" in resized.unsupported[0].text
    assert "resized" in resized.unsupported[0].reason  # cannot be honoured: said so, not dropped


def test_a_kept_thing_that_is_found_stays_exactly_as_it_was(scene: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.png"
    r = costa("edit", str(scene), "make the image darker but keep the red square unchanged", "-o", str(out),
              "--accept-unverified", "--no-reflect", home=tmp_path / "home")  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    assert "(what to keep unchanged)" in r.stdout and "keeping red square unchanged" in r.stdout, r.stdout
    before, after = _img(scene), _img(out)
    y0, y1, x0, x1 = SQUARE
    assert np.array_equal(after[y0:y1, x0:x1], before[y0:y1, x0:x1])  # kept, pixel for pixel
    rest = np.ones(before.shape[:2], bool)
    rest[y0 - 2 : y1 + 2, x0 - 2 : x1 + 2] = False
    assert after[rest].mean() < before[rest].mean() - 3  # … while the rest of the image got darker
    assert "the kept red square: 0.0% of its" in r.stdout


def test_brighten_the_cat_keeping_the_background_sharp(scene: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.png"
    y0, y1, x0, x1 = CAT
    box = f"{x0},{y0},{x1 - x0},{y1 - y0}"
    r = costa("edit", str(scene), "brighten the cat, keeping the background sharp", "--box", box, "-o", str(out),
              "--accept-unverified", "--no-reflect", home=tmp_path / "home")  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Global Adjustment target='cat' result='brighter' keeping background unchanged" in r.stdout, r.stdout
    before, after = _img(scene), _img(out)
    assert after[y0:y1, x0:x1].mean() > before[y0:y1, x0:x1].mean() + 3  # the cat is brighter …
    outside = np.ones(before.shape[:2], bool)
    outside[y0 - 20 : y1 + 20, x0 - 20 : x1 + 20] = False
    assert np.array_equal(after[outside], before[outside])  # … and the background exactly as it was


def test_a_kept_thing_no_tool_can_locate_is_reported_and_the_edit_still_runs(scene: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.png"
    r = costa("edit", str(scene), "make the sky blue and keep the trees unchanged", "--box", "0,0,200,15", "-o",
              str(out), "--accept-unverified", "--no-reflect", home=tmp_path / "home")  # fmt: skip
    assert "Object Segmentation target='trees' (what to keep unchanged)" in r.stdout, r.stdout
    assert "could not locate the trees (to keep unchanged)" in r.stdout + r.stderr, r.stdout + r.stderr
    assert "is not verified" in r.stdout + r.stderr
    assert out.is_file() and not np.array_equal(_img(out), _img(scene))  # the sky was still recoloured


def test_the_page_shows_a_located_kept_thing_as_kept_not_as_failed(scene: Path, tmp_path: Path) -> None:
    """The keep step edits nothing and ends no edit's path: after the turn it is 'kept' (🔒, 'Located, to keep as
    it is'), not '❌ Not done' as the page said of the astronaut before. Through the real turn and the page's
    renderer."""
    import os

    from costa.agent import run_turn
    from costa.config import Settings
    from costa.services import Services
    from costa.session.view import TurnView
    from costa.turn.records import TurnConfig
    from ui import render as R

    text = "make the image darker but keep the red square unchanged"
    plan = plan_with_rules(text)
    keep = next(s.id for s in plan.subtasks if s.params.get("role") == "keep")
    env = {**os.environ, "COSTA_HOME": str(tmp_path / "home")}
    services = Services(Settings.from_env(env))
    view = TurnView(text, {})
    for ev in run_turn(services, _img(scene).astype(np.uint8), plan, TurnConfig(reflect=False)):
        view.apply(ev)
    assert view.subtask_state(keep) == "kept"
    edit = next(s.id for s in plan.subtasks if s.id != keep)
    assert view.subtask_state(edit) in ("done", "proposed")
    (msg,) = [m for m in R.chat_messages(view) if m.get("metadata", {}).get("id", "").endswith(f"-{keep}")]
    assert msg["metadata"]["title"].startswith("🔒") and "Located, to keep as it is" in msg["content"]
    assert "Not done" not in msg["content"]
    assert "located: kept unchanged" in R.tree_markdown(view)
