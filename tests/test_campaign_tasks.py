"""Task sets (JSON / YAML, paths relative to the file) and the importers of the shared benchmark formats."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from costa.campaign.importers import import_tasks
from costa.campaign.tasks import load_task_set, write_task_set
from costa.errors import InputError
from tests.conftest import SHARED_BENCHMARKS as _DEFAULT

SHARED_BENCHMARKS = Path(os.environ.get("COSTA_BENCHMARKS_DIR") or _DEFAULT)
needs_data = pytest.mark.skipif(not SHARED_BENCHMARKS.is_dir(), reason="no ../shared/benchmarks")


def _png(path: Path, size: tuple[int, int] = (40, 30)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.zeros((size[1], size[0], 3), np.uint8)).save(path)
    return path


def test_a_yaml_task_set_reads_paths_relative_to_its_file_and_per_turn_pointing(tmp_path: Path) -> None:
    _png(tmp_path / "sets" / "img" / "a.png")
    _png(tmp_path / "sets" / "img" / "mask.png")
    (tmp_path / "sets" / "tasks.yaml").write_text(
        "tasks:\n"
        "  - id: 7\n"
        "    image: img/a.png\n"
        "    category: colour\n"
        "    turns: [make the ball blue, {instruction: remove it, points: [[3, 4], [5, 6, neg]]}]\n"
        "    box: ['1,2,10,10', null]\n"
        "    brush: [null, img/mask.png]\n"
    )
    ts = load_task_set(tmp_path / "sets" / "tasks.yaml")
    (t,) = ts.tasks
    assert t.id == "7" and t.category == "colour" and t.image == (tmp_path / "sets" / "img" / "a.png").resolve()
    first, second = t.turns
    assert (first.instruction, first.box, first.pointing) == ("make the ball blue", "1,2,10,10", "box")
    assert second.brush == (tmp_path / "sets" / "img" / "mask.png").resolve() and second.pointing == "brush"
    assert [(p.x, p.y, p.positive) for p in second.points] == [(3, 4, True), (5, 6, False)]
    # written elsewhere, the paths are made relative to the new file and read back the same
    (tmp_path / "elsewhere").mkdir()
    out = write_task_set(ts, tmp_path / "elsewhere" / "copy.json")
    assert json.loads(out.read_text())["tasks"][0]["image"] == "../sets/img/a.png"
    again = load_task_set(out)
    assert again.tasks == ts.tasks


@pytest.mark.parametrize(
    ("task", "message"),
    [
        ({"id": "a", "image": "missing.png", "turns": ["x"]}, "image 'missing.png' does not exist"),
        ({"id": "a", "image": "a.png", "turns": []}, "turns must be a non-empty list"),
        ({"id": "a", "image": "a.png", "turns": ["  "]}, "the instruction must be non-empty"),
        ({"id": "a", "image": "a.png", "turns": [{"instruction": "x", "box": "1,2,0,4"}]}, "box must be x,y,w,h"),
        ({"id": "a", "image": "a.png", "turns": [{"instruction": "x", "points": [[1]]}]}, "a point must be"),
        ({"id": "a", "image": "a.png", "turns": ["x"], "colour": "red"}, "unknown key(s) ['colour']"),
        ({"id": "a", "image": "a.png", "turns": ["x", "y"], "box": ["1,1,2,2"]}, "one entry per turn (2)"),
        ({"image": "a.png", "turns": ["x"]}, "id must be a non-empty string"),
    ],
)
def test_a_malformed_task_names_the_file_the_task_and_the_value(tmp_path: Path, task: dict, message: str) -> None:
    _png(tmp_path / "a.png")
    path = tmp_path / "set.json"
    path.write_text(json.dumps({"tasks": [task]}))
    with pytest.raises(InputError) as e:
        load_task_set(path)
    assert str(path) in str(e.value) and "task 1" in str(e.value) and message in str(e.value)


def test_a_repeated_task_id_and_an_unreadable_file_are_refused(tmp_path: Path) -> None:
    _png(tmp_path / "a.png")
    path = tmp_path / "set.json"
    path.write_text(json.dumps({"tasks": [{"id": "a", "image": "a.png", "turns": ["x"]}] * 2}))
    with pytest.raises(InputError, match="id 'a' is used twice"):
        load_task_set(path)
    path.write_text("{not json")
    with pytest.raises(InputError, match="is not readable"):
        load_task_set(path)
    with pytest.raises(InputError, match="does not exist"):
        load_task_set(tmp_path / "nope.yaml")


@needs_data
def test_costa_samples_are_the_two_prompted_images() -> None:
    ts = import_tasks("costa", SHARED_BENCHMARKS / "costa")
    assert [t.id for t in ts.tasks] == ["costa-32", "costa-40"]
    assert ts.tasks[1].turns[0].instruction.startswith("Segment the dog, detect the person")
    assert any("34" in n for n in ts.notes)  # no prompt for task 34 anywhere upstream: said, not invented


@needs_data
def test_magicbrush_sessions_are_chains_of_turns_with_their_human_targets() -> None:
    ts = import_tasks("magicbrush", SHARED_BENCHMARKS / "magicbrush_sample")
    assert len(ts.tasks) == 12 and sum(len(t.turns) for t in ts.tasks) == 20
    assert sorted(len(t.turns) for t in ts.tasks if len(t.turns) > 1) == [2, 2, 3, 3, 3]
    chain = ts.by_id("mb-82041")
    assert chain.image.name == "82041_1.png" and [t.target.name for t in chain.turns if t.target] == [
        "82041_1.png",
        "82041_2.png",
        "82041_3.png",
    ]
    assert all(t.target is not None and t.target.parent.name == "edited" for t in chain.turns)


@needs_data
def test_editeval_keeps_available_photos_and_a_limit_spreads_over_the_categories() -> None:
    full = import_tasks("editeval", SHARED_BENCHMARKS / "editeval_v1")
    assert len(full.tasks) == 42 and len(full.notes) == 8  # 8 originals were too large to copy: noted, left out
    twenty = import_tasks("editeval", SHARED_BENCHMARKS / "editeval_v1", limit=20)
    counts = Counter(t.category for t in twenty.tasks)
    assert len(twenty.tasks) == 20 and len(counts) == 7 and max(counts.values()) - min(counts.values()) <= 1
    assert all(t.image.is_file() for t in twenty.tasks)


@needs_data
def test_mteditbench_turn_lists_are_paired_with_the_users_images(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="never released"):
        import_tasks("mteditbench", SHARED_BENCHMARKS / "mteditbench_prompts")
    _png(tmp_path / "2.png")
    _png(tmp_path / "5.jpg")
    ts = import_tasks("mteditbench", SHARED_BENCHMARKS / "mteditbench_prompts", images=tmp_path)
    assert [t.id for t in ts.tasks] == ["mte-2", "mte-5"]
    assert ts.tasks[0].turns[0].instruction == "Remove all clothes from the wooden surface"
    assert len(ts.tasks[0].turns) == 6 and "998 turn list(s) have no image" in ts.notes[0]


def test_an_unknown_format_or_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown task format 'coco'"):
        import_tasks("coco", tmp_path)
    with pytest.raises(InputError, match="has no inputs/ and prompts/"):
        import_tasks("costa", tmp_path)
