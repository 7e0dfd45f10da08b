"""The evaluator's desk without a browser: blind cards, own queue only, save-and-next, slider pairs; the scale
benchmark's report; human verdicts as labelled cases for the calibration. The tests taking `backend` run on SQLite
and on a throwaway PostgreSQL."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from costa.campaign.desk import Card, pair_for_slider
from costa.errors import InputError
from tests.test_campaign_cli import ROOT, backend_fixture, campaign_db, costa, write_tasks  # noqa: F401 (`backend`)


def test_a_card_has_no_field_for_the_condition_or_costas_verdict() -> None:
    names = {f.name for f in dataclasses.fields(Card)}
    assert not names & {"condition", "verdict", "tool", "tools", "quality", "seconds", "status", "alpha", "task_id"}


def test_slider_pairs_keep_one_display_size() -> None:
    small, big = np.zeros((100, 150, 3), np.uint8), np.full((2000, 3000, 3), 200, np.uint8)
    before, after = pair_for_slider(small, big)  # upscaling: both at the after image's (downscaled) size
    assert before.shape == after.shape == (853, 1280, 3)
    wide = np.full((100, 300, 3), 90, np.uint8)
    before, after = pair_for_slider(small, wide)  # outpainting: the old image centred on a grey canvas
    assert before.shape == after.shape == (100, 300, 3)
    assert before[50, 150].tolist() == [0, 0, 0] and before[50, 5].tolist() == [128, 128, 128]


@pytest.mark.slow
def test_an_evaluator_sees_and_scores_only_their_queue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: str | None
) -> None:
    home = tmp_path / "home"
    tasks = write_tasks(tmp_path / "set")
    assert costa(home, "create", "d", "--tasks", str(tasks), "--conditions", "alpha=0,2; reflect=off",
                 "--evaluators", "ann,bob,cy").returncode == 0  # fmt: skip
    assert costa(home, "run", "d").returncode == 0
    monkeypatch.setenv("COSTA_HOME", str(home))
    from costa.campaign.desk import CampaignDesk
    from costa.config import Settings
    from costa.services import Services
    from costa.session.core import SessionCore

    core = SessionCore(Services(Settings.from_env()))
    desk = CampaignDesk(core)
    with pytest.raises(InputError, match="not an evaluator of campaign"):
        desk.card("d", "mallory", 0)
    ann, bob = desk.queue("d", "ann"), desk.queue("d", "bob")
    assert ann and bob and {i for i, _ in ann} != {i for i, _ in bob}
    not_ann = next(k for k in desk.db.queue_units("d", "cy") if k not in ann)
    with pytest.raises(InputError, match="not in your queue"):
        desk.save("d", "ann", *not_ann, 1.0)
    with pytest.raises(InputError, match="is not 0 \\(fail\\)"):
        desk.save("d", "ann", *ann[0], 0.55)
    card = desk.card("d", "ann", 0)
    assert card is not None and card.score is None and card.before.shape == card.after.shape
    nxt = desk.save("d", "ann", card.item, card.unit, 0.7, "  fine  ")
    assert nxt == 1 and desk.card("d", "ann", 0).score == 0.7 and desk.card("d", "ann", 0).comment == "fine"
    assert desk.first_open("d", "ann") == 1
    desk.save("d", "ann", card.item, card.unit, 0.3)  # back to change it: replaced, not added
    assert [s.score for s in desk.db.scores("d", "ann")] == [0.3]
    with pytest.raises(InputError, match="only the admins"):
        desk.check_admin("d", "ann", login=True)
    desk.check_admin("d", None, login=False)
    core.close()


@pytest.mark.slow
def test_the_scale_benchmark_prints_its_figures() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "costa", "bench", "campaign", "--items", "20", "--evaluators", "2"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "campaign scale: 20 items × 2 evaluators" in r.stdout
    assert "(target < 2 s)" in r.stdout and "ratio" in r.stdout and "not counted" in r.stdout


@pytest.mark.slow
def test_human_verdicts_are_labelled_cases_with_their_context(tmp_path: Path, backend: str | None) -> None:
    pytest.importorskip("costa.calibration")
    from costa.campaign.stats import ScoreRow
    from costa.campaign.verdicts import human_verdicts

    home = tmp_path / "home"
    tasks = write_tasks(tmp_path / "set")
    assert costa(home, "create", "v", "--tasks", str(tasks), "--conditions", "reflect=off").returncode == 0
    assert costa(home, "run", "v").returncode == 0
    db = campaign_db(home)
    store = db.store
    units = db.units("v")
    ball = next(u for u in units if u.kind == "object_recoloration")
    db.save_scores("v", [ScoreRow(ball.item_id, ball.unit, "ann", 1.0), ScoreRow(ball.item_id, ball.unit, "bob", 0.6)])
    (case,) = human_verdicts(store, "v")
    assert (case.kind, case.pointing, case.evaluators, case.score, case.right) == (
        "object_recoloration",
        "box",
        2,
        0.8,
        True,
    )
    assert case.tool and case.costa == ball.verdict and case.content in ("photo", "graphic")
    assert case.region in ("small", "medium", "large")  # the ball's pixels changed


def test_the_page_names_a_session_as_its_exported_files_do() -> None:
    """Issue 23: the Evaluate tab's CSV carried another session name than the one the page showed."""
    from costa.bundle import export_name
    from costa.config import Settings
    from costa.services import Services
    from costa.session.core import SessionCore
    from ui.overlays import status_line

    core = SessionCore(Services(Settings.from_env()))
    s = core.new_session(None)
    name = export_name(s.id)
    line = status_line(False, "LLM: offline", 1, 2, s.id, None)
    assert name in line and s.id[:8] not in line
    assert name in core.versions.scores_csv(s.id, None).name
    assert core.choices(None, [s.id], s.id)[0][0].startswith(name)
    core.close()


@pytest.mark.slow
def test_a_turn_that_changes_nothing_still_has_a_card_with_the_photo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """EditEval's "Add a red car …" is skipped on the CPU build and "sing a song" plans nothing: neither turn keeps a
    version of its own. Their cards show the task's photo as before and after (the queue used to refuse to open,
    naming the item id to the evaluator), and a second turn after them edits that photo."""
    import json

    from costa.images import load_image

    folder = tmp_path / "set"
    folder.mkdir()
    (folder / "ball.png").write_bytes((ROOT / "assets" / "red_ball.png").read_bytes())
    tasks = [
        {"id": "add", "image": "ball.png", "turns": ["add a red car on the road"]},
        {"id": "nothing", "image": "ball.png", "turns": ["sing me a song", "make the photo brighter"]},
    ]
    (folder / "tasks.json").write_text(json.dumps({"tasks": tasks}))
    home = tmp_path / "home"
    assert costa(home, "create", "n", "--tasks", str(folder / "tasks.json"), "--conditions", "reflect=off",
                 "--evaluators", "ann").returncode == 0  # fmt: skip
    assert costa(home, "run", "n").returncode == 0
    monkeypatch.setenv("COSTA_HOME", str(home))
    from costa.campaign.desk import CampaignDesk, pair_for_slider
    from costa.config import Settings
    from costa.services import Services
    from costa.session.core import SessionCore

    desk = CampaignDesk(SessionCore(Services(Settings.from_env())))
    photo = load_image((folder / "ball.png").read_bytes(), 10**8)
    shown, _ = pair_for_slider(photo, photo)
    queue = desk.queue("n", "ann")
    assert len(queue) == 3, queue
    brighter = 0
    for k in range(len(queue)):
        card = desk.card("n", "ann", k)
        assert card is not None
        assert np.array_equal(card.before, shown), card.description  # the task's photo, as stored
        if "bright" in card.description.lower():
            assert card.after.mean() > card.before.mean() + 3
            brighter += 1
        else:
            assert np.array_equal(card.after, card.before), card.description  # nothing changed: after = before
    assert brighter == 1


@pytest.mark.slow
def test_a_proposed_result_beside_a_skipped_subtask_is_what_evaluators_see(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A campaign runs with accept_unverified: the upscaling below passes its checks but is only proposed (no
    real-photo evidence on flat graphics) and the car cannot be added on the CPU build. The turn used to keep no
    version at all, so the evaluators saw the photo unchanged for the upscaling (and costa's "done" deblurring of
    CoSTA* sample 32 was scored as a failure). Now the proposal is the turn's result, with no pending proposal."""
    import json

    from costa.calibration import CALIBRATION_FILE

    monkeypatch.setenv("COSTA_CALIBRATION_TABLE", str(CALIBRATION_FILE))  # the real table: it vouches for no upscale

    folder = tmp_path / "set"
    folder.mkdir()
    (folder / "ball.png").write_bytes((ROOT / "assets" / "red_ball.png").read_bytes())
    tasks = [{"id": "up", "image": "ball.png", "turns": ["upscale the image by 2 and add a red car on the road"]}]
    (folder / "tasks.json").write_text(json.dumps({"tasks": tasks}))
    home = tmp_path / "home"
    assert costa(home, "create", "p", "--tasks", str(folder / "tasks.json"), "--conditions", "reflect=off",
                 "--evaluators", "ann").returncode == 0  # fmt: skip
    assert costa(home, "run", "p").returncode == 0
    monkeypatch.setenv("COSTA_HOME", str(home))
    from costa.campaign.desk import CampaignDesk
    from costa.campaign.items import owner_of
    from costa.config import Settings
    from costa.services import Services
    from costa.session.core import SessionCore

    core = SessionCore(Services(Settings.from_env()))
    desk = CampaignDesk(core)
    units = {u.kind: u for u in desk.db.units("p")}
    assert units["image_upscaling"].verdict == "proposed"  # costa's own verdict is kept for the report
    assert units["object_addition"].verdict == "skipped"
    item = desk.db.items("p")[0]
    owner = owner_of("p")
    _, image = core.head(item.session_id, owner)
    assert image is not None and image.shape[:2] == (840, 1280)  # the upscaled image is the session's result
    assert core.proposals.pending(item.session_id, owner) is None  # nothing waits for a person's Accept
    up = units["image_upscaling"]
    assert up.before_version is not None and up.after_version is not None and up.after_version != up.before_version
    car = units["object_addition"]  # not done: shown as the image stood then, not with the upscaling as its "after"
    assert car.before_version == car.after_version == up.after_version
    from ui.campaign import card_markdown

    cards = [desk.card("p", "ann", k) for k in range(2)]
    text = {c.description.split(" ")[0]: card_markdown(c) for c in cards if c is not None}
    assert "Image size: 640 × 420 px → 1280 × 840 px" in text["Image"]  # the slider shows both at one size
    assert "Image size: 1280 × 840 px (unchanged)" in text["Object"]


@pytest.mark.slow
def test_a_detection_is_scored_with_its_boxes_drawn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A detection's answer was coordinates only ("person at 319,343,73,146"), which nobody can judge by eye. The
    unit keeps the boxes (a new column, read back as tuples) and the card's after image has them drawn; the before
    image stays the photo."""
    import json

    from PIL import Image
    from skimage import data

    folder = tmp_path / "set"
    folder.mkdir()
    Image.fromarray(data.astronaut()).save(folder / "astronaut.png")
    tasks = [{"id": "det", "image": "astronaut.png", "turns": ["detect the person"]}]
    (folder / "tasks.json").write_text(json.dumps({"tasks": tasks}))
    home = tmp_path / "home"
    assert costa(home, "create", "b", "--tasks", str(folder / "tasks.json"), "--conditions", "reflect=off",
                 "--evaluators", "ann").returncode == 0  # fmt: skip
    assert costa(home, "run", "b").returncode == 0
    monkeypatch.setenv("COSTA_HOME", str(home))
    from costa.campaign.desk import CampaignDesk
    from costa.config import Settings
    from costa.services import Services
    from costa.session.core import SessionCore

    desk = CampaignDesk(SessionCore(Services(Settings.from_env())))
    (unit,) = desk.db.units("b")
    assert unit.kind == "object_detection" and unit.boxes, unit
    x, y, w, h, label = unit.boxes[0]
    assert label == "person" and f"{x},{y},{w},{h}" in unit.answer  # the same finds as the text answer
    card = desk.card("b", "ann", 0)
    assert card is not None
    assert np.array_equal(card.before, data.astronaut())  # 512 px: shown as it is
    changed = np.abs(card.after.astype(int) - card.before.astype(int)).max(axis=2) > 0
    assert changed[y, x + w // 2] and changed[y + h // 2, x]  # the outline, top and left edges
    assert not changed[y + h // 2, x + w // 2]  # not filled in
    inside = np.zeros_like(changed)
    inside[max(0, y - 20) : y + h + 20, max(0, x - 20) : x + w + 20] = True
    assert not (changed & ~inside).any()  # nothing drawn away from the box


@pytest.mark.slow
def test_campaign_scores_are_labelled_cases_for_the_calibration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`bench real --write --verdicts HOME` counts the evaluators' scores too: a scored subtask whose steps passed
    the checks is a case in the calibration's own context (a whole-image kind: region "none"), right at a mean ≥ 0.8;
    a skipped one is no case."""
    import json

    from bench.real_tables import person_verdicts
    from costa.calibration import CALIBRATION_FILE, StepContext

    monkeypatch.setenv("COSTA_CALIBRATION_TABLE", str(CALIBRATION_FILE))
    folder = tmp_path / "set"
    folder.mkdir()
    (folder / "ball.png").write_bytes((ROOT / "assets" / "red_ball.png").read_bytes())
    tasks = [{"id": "up", "image": "ball.png", "turns": ["upscale the image by 2 and add a red car on the road"]}]
    (folder / "tasks.json").write_text(json.dumps({"tasks": tasks}))
    home = tmp_path / "home"
    assert costa(home, "create", "v", "--tasks", str(folder / "tasks.json"), "--conditions", "reflect=off",
                 "--evaluators", "ann,bob").returncode == 0  # fmt: skip
    assert costa(home, "run", "v").returncode == 0
    items = json.loads(costa(home, "items", "v", "--json").stdout)
    (item,) = items
    rows = ["item,subtask,evaluator,score,comment"]
    for s in item["subtasks"]:
        score = {"image_upscaling": (1, 0.7), "object_addition": (0, 0)}[s["kind"]]
        rows += [f"{item['item']},{s['id']},ann,{score[0]},", f"{item['item']},{s['id']},bob,{score[1]},"]
    (tmp_path / "scores.csv").write_text("\n".join(rows) + "\n")
    assert costa(home, "import-scores", "v", str(tmp_path / "scores.csv")).returncode == 0
    cases = person_verdicts(home)
    assert [c.context for c in cases] == [StepContext("image_upscaling", "lanczos_upscale", "graphic", "none", "none")]
    assert cases[0].right  # mean 0.85
