"""Reflection: the protocol's numbers, the offline experts on generated images, memory, and the protocol end to end
against the FAKE OpenAI-compatible server (tests/fake_openai.py): threshold, τ_it, best-of, a malformed expert, one
expert down, a slow expert."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import yaml

from costa.agent import run_turn
from costa.checks import CheckContext
from costa.config import Settings
from costa.events import ExpertDropped, LlmCall, Reflection, ReflectionKept, ReflectionRetry, TurnDone
from costa.planner import plan_with_rules
from costa.reflect.experts import Evidence, PerceptionExpert, PreservationExpert, ProtectedRegion
from costa.reflect.memory import SessionMemory, TurnRecord, record_from_row, record_to_row
from costa.reflect.protocol import ExpertJudgement, aggregate, load_protocol, parse_protocol
from costa.services import Services
from costa.store import Store, load_memory, save_memory
from costa.testing.calibration import fake_table
from costa.turn.records import TurnConfig, UserRegion
from costa.types import Box, EditState, Subtask, ToolOutput
from tests.fake_openai import FakeOpenAI, chat, error, slow

PROTOCOL = load_protocol()
DIMS = ("semantic_alignment", "perceptual_quality", "aesthetics", "logical_consistency")


def test_table_holds_the_papers_numbers() -> None:
    assert (PROTOCOL.tau_sr, PROTOCOL.tau_it) == (7.0, 3)
    assert [e.name for e in PROTOCOL.offline] == ["instruction", "preservation", "perception"]
    assert len(PROTOCOL.vlm_roles) == 3 and all(r.rubric for r in PROTOCOL.vlm_roles)


def test_not_judged_dimensions_stay_out_of_the_mean() -> None:
    a = ExpertJudgement("a", "offline", {"semantic_alignment": 8.0, "aesthetics": None})
    b = ExpertJudgement("b", "offline", {"perceptual_quality": 4.0, "aesthetics": 6.0})
    nothing = ExpertJudgement("c", "offline", {})
    assert a.score == 8.0 and b.score == 5.0 and nothing.score is None
    assert aggregate([a, b, nothing]) == 6.5
    assert PROTOCOL.decide(7.0, 1) == ("accept", 7.0)
    assert PROTOCOL.decide(6.9, 2)[0] == "retry" and PROTOCOL.decide(6.9, 3)[0] == "best_of"
    assert a.to_event()["scores"] == {"semantic_alignment": 8.0, "perceptual_quality": None, "aesthetics": None,
                                      "logical_consistency": None}  # fmt: skip


def test_bad_table_names_the_value() -> None:
    from costa.errors import TableError

    with pytest.raises(TableError, match="tau_it must be at least 1"):
        parse_protocol({"tau_sr": 7, "tau_it": 0})
    with pytest.raises(TableError, match="unknown dimensions"):
        parse_protocol({"tau_sr": 7, "tau_it": 3, "offline": [{"name": "x", "judges": ["beauty"]}]})


def _evidence(start: np.ndarray, after: np.ndarray, region: np.ndarray, kind: str, protected=()) -> Evidence:
    services = Services()
    spec = services.tables.subtasks[kind]
    out = ToolOutput(after, {}, region)
    s = Subtask(id="s1", kind=kind, target="object", result="blue")
    return Evidence(s, spec, ("image",), start, EditState(start), EditState(after), out,
                    CheckContext(reader=None), tuple(protected))  # fmt: skip


def _texture(h: int = 96, w: int = 128, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(40, 220, (h, w, 3), dtype=np.uint8)


def test_preservation_flags_a_damaged_earlier_edit_and_accepts_an_intact_one() -> None:
    start = _texture()
    target = np.zeros(start.shape[:2], bool)
    target[10:40, 10:40] = True
    earlier = np.zeros_like(target)
    earlier[50:80, 70:110] = True
    after = start.copy()
    after[target] = (0, 0, 255)
    ok = PreservationExpert(PROTOCOL).judge(_evidence(start, after, target, "object_recoloration",
                                            [ProtectedRegion(1, "s1", "the sign", earlier)]))  # fmt: skip
    assert ok.scores["logical_consistency"] == 10.0 and ok.score == 10.0
    damaged = after.copy()
    damaged[55:75, 75:105] = 0
    bad = PreservationExpert(PROTOCOL).judge(_evidence(start, damaged, target, "object_recoloration",
                                             [ProtectedRegion(1, "s1", "the sign", earlier)]))  # fmt: skip
    assert bad.scores["logical_consistency"] == 0.0
    assert any("the sign" in f.text and f.action == "restore_protected" for f in bad.negative)
    assert bad.scores["perceptual_quality"] is None  # not its dimension: not judged, never a constant


def test_perception_finds_a_smear_in_a_textured_fill() -> None:
    start = _texture()
    hole = np.zeros(start.shape[:2], bool)
    hole[30:60, 40:80] = True
    smeared = start.copy()
    smeared[hole] = start[hole].mean(axis=0).astype(np.uint8)
    textured = start.copy()
    textured[hole] = _texture(seed=1)[hole]
    bad = PerceptionExpert(PROTOCOL).judge(_evidence(start, smeared, hole, "object_removal"))
    good = PerceptionExpert(PROTOCOL).judge(_evidence(start, textured, hole, "object_removal"))
    assert bad.scores["aesthetics"] is not None and bad.scores["aesthetics"] < 3
    assert good.scores["aesthetics"] is not None and good.scores["aesthetics"] >= 7
    assert bad.scores["semantic_alignment"] is None


def test_perception_does_not_call_new_black_letters_noise_or_clipping() -> None:
    """Drawn text is crisp and solid by design (bench task 9: "add the text 'FOOD'" in black on a green wall was
    refused as "40.9× noisier than its surroundings; 46 % clipped"); a halo around the letters still counts."""
    from tests.text_helpers import Line, background, draw

    start = background("gradient", 300, 160, (120, 220, 110))
    after = draw(start, [Line("FOOD", (110, 60), 26, (0, 0, 0))])
    region = np.abs(after.astype(int) - start.astype(int)).sum(axis=2) > 0
    judged = PerceptionExpert(PROTOCOL).judge(_evidence(start, after, region, "text_addition"))
    assert judged.score >= 7, judged.negative
    haloed = after.copy()
    ring = np.zeros_like(region)
    ring[50:100, 95:215] = True
    haloed[ring & ~region] = (255, 255, 255)  # a white box drawn around the word
    bad = PerceptionExpert(PROTOCOL).judge(_evidence(start, haloed, region, "text_addition"))
    assert bad.score < 7 and any("halo" in f.text for f in bad.negative), bad


def test_perception_judges_a_smear_against_the_fill_s_own_surroundings() -> None:
    """Text erased from a smooth sign panel on a busy photo leaves a smooth fill on a smooth panel: not a smear
    (bench task 9 on a photo was refused as "0.16× the rest's texture"); the same smooth fill in textured ground is."""
    start = _texture(120, 160)
    panel = np.zeros(start.shape[:2], bool)
    panel[30:90, 30:130] = True
    start[panel] = (120, 200, 120)  # a plain panel on the textured photo
    hole = np.zeros_like(panel)
    hole[50:70, 50:110] = True  # where the letters were
    start[52:68, 52:108:6] = (20, 20, 20)  # their strokes
    after = start.copy()
    after[hole] = (120, 200, 120)  # erased: the panel's own colour
    fine = PerceptionExpert(PROTOCOL).judge(_evidence(start, after, hole, "text_removal"))
    assert not any("smear" in f.text for f in fine.negative), fine.negative
    bare = _texture(120, 160)
    smeared = bare.copy()
    smeared[hole] = bare[hole].mean(axis=0).astype(np.uint8)
    bad = PerceptionExpert(PROTOCOL).judge(_evidence(bare, smeared, hole, "text_removal"))
    assert any("smear" in f.text for f in bad.negative), bad.negative


def _photo() -> np.ndarray:
    """A real photograph (scikit-image's coffee cup, 400×600): structure a fill cannot invent."""
    from skimage import data

    return np.ascontiguousarray(data.coffee())


def test_perception_sees_a_fill_pasted_from_elsewhere_in_a_photo() -> None:
    """Bench tasks 24 and 36: PatchMatch filled a large hole in a salad photo with a piece of the bowl's rim and
    passed every check at 1.00. A fill copied verbatim from another place of the photo is pasted content; the photo's
    own blurred diffusion fill is not, and neither is a fresh draw of a noise texture (not a copy of anything)."""
    import cv2

    start = _photo()
    hole = np.zeros(start.shape[:2], bool)
    hole[120:200, 250:350] = True
    pasted = start.copy()
    pasted[120:200, 250:350] = start[250:330, 60:160]  # a piece of the cup's saucer and the table
    bad = PerceptionExpert(PROTOCOL).judge(_evidence(start, pasted, hole, "object_removal"))
    assert bad.score is not None and bad.score < 3, bad
    assert any("copies of other places" in f.text and f.action == "other_path" for f in bad.negative), bad.negative
    diffused = cv2.inpaint(start, hole.astype(np.uint8) * 255, 5, cv2.INPAINT_TELEA)
    fine = PerceptionExpert(PROTOCOL).judge(_evidence(start, diffused, hole, "object_removal"))
    assert not any("copies" in f.text for f in fine.negative), fine.negative
    noise = _texture(160, 200)
    hole2 = np.zeros(noise.shape[:2], bool)
    hole2[40:120, 50:150] = True
    redrawn = noise.copy()
    redrawn[hole2] = _texture(160, 200, seed=3)[hole2]
    grain = PerceptionExpert(PROTOCOL).judge(_evidence(noise, redrawn, hole2, "object_removal"))
    assert not any("copies" in f.text for f in grain.negative), grain.negative


@pytest.mark.parametrize(("photo", "pasted"), [("grass", False), ("astronaut", True)])
def test_perception_judges_copies_only_where_the_surroundings_differ(photo: str, pasted: bool) -> None:
    """A hole in scikit-image's lawn filled with a verbatim copy of another patch of the same lawn is the lawn (it was
    refused as pasted content before the surroundings' side-to-side variation gated the measure); the same copy into
    the astronaut's face pastes someone's uniform there. The real PatchMatch on the lawn is not refused either."""
    from skimage import data

    from costa.types import Mask

    image = np.ascontiguousarray(getattr(data, photo)()[:400, :500])
    if image.ndim == 2:
        image = np.ascontiguousarray(np.stack([image] * 3, axis=-1))
    hole = np.zeros(image.shape[:2], bool)
    hole[133:223, 166:276] = True
    copied = image.copy()
    copied[133:223, 166:276] = image[290:380, 360:470]
    judged = PerceptionExpert(PROTOCOL).judge(_evidence(image, copied, hole, "object_removal"))
    assert any("copies of other places" in f.text for f in judged.negative) is pasted, judged
    if not pasted:
        tool = Services().tool("remove_patchmatch")
        before = EditState(image, {"masks": (Mask(hole, label="object"),)})
        out = tool(before, Subtask(id="s1", kind="object_removal", target="object"), tool.spec.params_for_attempt(0))
        real = PerceptionExpert(PROTOCOL).judge(_evidence(image, out.image, out.edited_region, "object_removal"))
        assert not any("copies of other places" in f.text for f in real.negative), real


def test_perception_smear_ignores_the_neighbouring_words_around_an_erased_one() -> None:
    """Bench task 14: erasing 'BOOKS' from a sign with other words right around it was refused as "0.11× the
    rest's texture: a smear" (the ring's mean sharpness was the other letters'), though the fill matched the true
    panel to 41 dB; the ring's median is the panel's."""
    from tests.text_helpers import Line, background, draw

    panel = background("flat", 360, 160, (230, 225, 210))
    start = draw(panel, [Line("BOOKS", (120, 60), 30, (20, 20, 20)), Line("MUSEUM CAFE", (60, 20), 28, (20, 20, 20)),
                         Line("OPEN DAILY", (70, 100), 28, (20, 20, 20))])  # fmt: skip
    hole = np.zeros(start.shape[:2], bool)
    hole[58:96, 116:230] = True
    after = start.copy()
    after[hole] = panel[hole]  # the true panel where 'BOOKS' was
    judged = PerceptionExpert(PROTOCOL).judge(_evidence(start, after, hole, "text_removal"))
    assert not any("smear" in f.text for f in judged.negative), judged.negative


def test_memory_resolves_references() -> None:
    m = SessionMemory()
    m.add(TurnRecord(1, "Make the object red.", "Make the object red.", (("object_recoloration", "object", "red"),),
                     box=Box(1, 2, 3, 4)))  # fmt: skip
    assert m.resolve("Use green instead.").text == "make the red object green"  # the object is red now
    assert m.resolve("Use green instead.").box == Box(1, 2, 3, 4)  # no pixels remembered: that turn's box
    assert m.resolve("Make it bigger.").text == "Make the red object bigger"
    assert m.resolve("Make it slightly darker.").text == "Make the red object slightly darker"  # the last target
    m.add(TurnRecord(2, "Highlight the word 'SALE'.", "Highlight the word 'SALE'.",
                     (("keyword_highlighting", "SALE", None),)))  # fmt: skip
    assert m.resolve("Do the same to the word 'OPEN'.").text == "Highlight the word 'OPEN'."
    assert m.resolve("Do the same to the other sign.").text == "Highlight the other sign."
    assert m.resolve("Remove it.").text == "Remove the word 'SALE'"
    assert m.resolve("Make the ball the same colour.").text == "Make the ball red"
    assert "turn 1" in m.summary_lines()[0]


def test_memory_round_trips_through_the_store(tmp_path: Path) -> None:
    store = Store(tmp_path)
    s = store.create_session()
    v = store.add_version(s.id, np.zeros((8, 8, 3), np.uint8), kind="upload", label="upload")
    turn = store.start_turn(s.id, v.id, "Make the object red.", None, {})
    mask = np.zeros((8, 8), bool)
    mask[2:5, 3:7] = True
    rec = TurnRecord(turn, "Make it red.", "Make the object red.", (("object_recoloration", "object", "red"),),
                     (("s1", mask),), ("kept attempt 2",), Box(0, 0, 4, 4))  # fmt: skip
    save_memory(store, s.id, turn, record_to_row(rec))
    back = record_from_row(load_memory(store, s.id)[0])
    assert back.resolved == rec.resolved and back.box == rec.box and back.feedback == rec.feedback
    assert np.array_equal(back.masks[0][1], mask)


# ------------------------------------------------------------------------------- protocol against the FAKE


def _scene() -> tuple[np.ndarray, Box]:
    img = np.full((72, 96, 3), 120, np.uint8)
    yy, xx = np.mgrid[:72, :96]
    disc = (yy - 36) ** 2 + (xx - 48) ** 2 < 18**2
    img[disc] = (200, 30, 30)
    return img, Box(26, 14, 44, 44)


def _vlm_table(tmp_path: Path, roles: int, offline: bool = False) -> Path:
    data = yaml.safe_load(Path("tool_tables/reflection.yaml").read_text())
    if not offline:
        data["offline"] = []
    data["vlm_roles"] = data["vlm_roles"][:roles]
    data["aggregator_rubric"] = ""
    path = tmp_path / "reflection.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _judge(score: float) -> dict:
    return {d: score for d in DIMS} | {"positive": ["fine"], "negative": [] if score >= 7 else ["looks wrong"]}


def _run(fake: FakeOpenAI, table: Path, monkeypatch: pytest.MonkeyPatch, timeout: float = 5.0, votes: str = "") -> list:
    """One reflected recolouring; the votes table is the FAKE all-voting one (conftest) unless `votes` names one."""
    settings = Settings.from_env({"COSTA_HOME": str(table.parent), "OPENAI_BASE_URL": fake.base_url,
                                  "COSTA_LLM_MODEL": "fake-vlm", "COSTA_LLM_RETRIES": "0",
                                  "COSTA_LLM_TIMEOUT": str(timeout), "COSTA_REFLECTION_TABLE": str(table),
                                  "COSTA_REFLECTION_VOTES": votes or os.environ["COSTA_REFLECTION_VOTES"],
                                  "COSTA_CALIBRATION_TABLE": str(fake_table())})  # fmt: skip
    services = Services(settings)
    image, box = _scene()
    plan = plan_with_rules("Make the object blue.", services.tables.subtasks)
    return list(run_turn(services, image, plan, TurnConfig(reflect=True), UserRegion(boxes=(box,))))


def test_threshold_accepts_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI([chat(_judge(7.0))]) as fake:
        events = _run(fake, _vlm_table(tmp_path, 1), monkeypatch)
    refl = [e for e in events if isinstance(e, Reflection)]
    assert [(r.attempt, r.score, r.decision) for r in refl] == [(1, 7.0, "accept")]
    assert refl[0].experts[0]["kind"] == "vlm" and refl[0].experts[0]["scores"]["aesthetics"] == 7.0
    assert events[-1].ok and any(isinstance(e, LlmCall) and e.prompt_tokens == 1200 for e in events)
    content = fake.chat_requests[0]["messages"][1]["content"]
    assert sum(p["type"] == "image_url" for p in content) == 2  # before and after


def test_tau_it_attempts_then_best_of(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI([chat(_judge(3.0)), chat(_judge(6.0)), chat(_judge(4.0))]) as fake:
        events = _run(fake, _vlm_table(tmp_path, 1), monkeypatch)
    refl = [e for e in events if isinstance(e, Reflection)]
    assert [(r.attempt, r.decision) for r in refl] == [(1, "retry"), (2, "retry"), (3, "best_of")]
    retries = [e for e in events if isinstance(e, ReflectionRetry)]
    # An attempt may log more than one retry: when its first action finds nothing that passes (here "other_path":
    # the only other path is the box taken for the disc, which the checks refuse), the next action is tried.
    assert sorted({r.attempt for r in retries}) == [2, 3] and retries[0].reason == "looks wrong"
    assert [r.attempt for r in retries] == sorted(r.attempt for r in retries)
    for a in (2, 3):
        actions = [r.action for r in retries if r.attempt == a]
        assert len(actions) == len(set(actions)), actions
    kept = next(e for e in events if isinstance(e, ReflectionKept))
    assert (kept.attempt, kept.score, kept.accepted) == (2, 6.0, False)  # the best attempt, labelled as such
    done = events[-1]
    assert isinstance(done, TurnDone) and not done.ok and done.image is not None
    assert len(fake.chat_requests) == 3


def test_malformed_expert_is_reasked_once_then_dropped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI([chat("the edit looks great"), chat(_judge(9.0))]) as fake:
        events = _run(fake, _vlm_table(tmp_path, 1), monkeypatch)
    assert [e.score for e in events if isinstance(e, Reflection)] == [9.0]
    assert "unusable" in fake.chat_requests[1]["messages"][-1]["content"]
    with FakeOpenAI([chat("nope"), chat({"semantic_alignment": 42})]) as fake:
        events = _run(fake, _vlm_table(tmp_path, 1, offline=True), monkeypatch)
    dropped = [e for e in events if isinstance(e, ExpertDropped)]
    assert len(dropped) == 1 and "malformed answer twice" in dropped[0].reason
    refl = next(e for e in events if isinstance(e, Reflection))
    assert [x["kind"] for x in refl.experts] == ["offline"] * 3  # the offline experts still judged


def test_one_expert_down_leaves_the_others(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI([error(500), chat(_judge(8.0))]) as fake:
        events = _run(fake, _vlm_table(tmp_path, 2), monkeypatch)
    dropped = [e for e in events if isinstance(e, ExpertDropped)]
    refl = [e for e in events if isinstance(e, Reflection)]
    assert len(dropped) == 1 and "endpoint failed" in dropped[0].reason
    assert len(refl) == 1 and refl[0].score == 8.0 and len(refl[0].experts) == 1
    assert any(isinstance(e, LlmCall) and not e.ok for e in events)  # the failed call still reaches the ledger


def test_slow_expert_times_out_without_holding_the_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI([slow(4.0), chat(_judge(8.0), delay=0.3)]) as fake:
        events = _run(fake, _vlm_table(tmp_path, 2), monkeypatch, timeout=1.0)
    dropped = [e for e in events if isinstance(e, ExpertDropped)]
    assert len(dropped) == 1 and "timed out" in dropped[0].reason
    assert next(e for e in events if isinstance(e, Reflection)).score == 8.0
    timed_out = [e for e in events if isinstance(e, LlmCall) and not e.ok]
    # The client gave up at its 1 s limit instead of waiting the 4 s the slow reply takes.
    assert len(timed_out) == 1 and timed_out[0].seconds < 3.0


def test_switch_off_runs_no_experts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"COSTA_HOME": str(tmp_path), "COSTA_REFLECT": "0", "COSTA_CALIBRATION_TABLE": str(fake_table())}
    services = Services(Settings.from_env(env))
    assert services.settings.reflect is False
    image, box = _scene()
    plan = plan_with_rules("Make the object blue.", services.tables.subtasks)
    events = list(run_turn(services, image, plan, region=UserRegion(boxes=(box,))))
    assert not [e for e in events if isinstance(e, Reflection)] and events[-1].ok


def test_session_memory_resolves_protects_and_persists(tmp_path: Path) -> None:
    from costa.reflect.session import load_session_memory
    from costa.session import SessionCore
    from tests.test_session_core import finish, new_session_with, run

    image, box = _scene()
    path = tmp_path / "disc.png"
    from PIL import Image

    Image.fromarray(image).save(path)
    settings = Settings(calibration_table=fake_table(), home=tmp_path)
    ws = SessionCore(Services(settings), Store(tmp_path / "store"))
    sid = new_session_with(ws, path)
    first = finish(run(ws, sid, None, "Make the object blue.", box=f"{box.x},{box.y},{box.w},{box.h}"))
    assert first.status == "done"
    second = finish(run(ws, sid, None, "Use green instead."))  # no box: the turn it refers to gives it
    ws.close()
    assert any("make the blue object green" in n for n in second.notes)  # the object is blue now
    assert second.status == "done" and second.plan is not None and second.plan.subtasks[0].result == "green"
    memory = load_session_memory(Store(tmp_path / "store"), sid)
    assert [t.resolved for t in memory.turns] == ["Make the object blue.", "make the blue object green"]
    assert memory.turns[0].box == box and memory.turns[0].masks and memory.protected(image.shape[:2])


def test_cli_writes_reflection_events_and_can_switch_them_off(tmp_path: Path) -> None:
    import io
    import json

    from PIL import Image

    from costa.cli import main

    image, box = _scene()
    src = tmp_path / "disc.png"
    Image.fromarray(image).save(src)
    args = [
        "edit", str(src), "Make the object blue.", "--box", f"{box.x},{box.y},{box.w},{box.h}",
        "-o", str(tmp_path / "out.png"), "--events", str(tmp_path / "ev.jsonl"),
    ]  # fmt: skip
    out = io.StringIO()
    assert main(args, out) == 0
    events = [json.loads(line) for line in (tmp_path / "ev.jsonl").read_text().splitlines()]
    refl = [e for e in events if e["kind"] == "reflection"]
    assert refl and set(refl[0]) == {
        "kind", "subtask_id", "attempt", "experts", "score", "decision", "merged", "calibrated", "silent"
    }  # fmt: skip
    assert refl[0]["merged"] == {}  # no aggregator without an endpoint
    assert set(refl[0]["experts"][0]) == {"name", "kind", "scores", "score", "positive", "negative"}
    assert set(refl[0]["experts"][0]["scores"]) == set(DIMS)
    assert "reflect s1 attempt 1" in out.getvalue()
    assert main([*args, "--no-reflect"], io.StringIO()) == 0
    events = [json.loads(line) for line in (tmp_path / "ev.jsonl").read_text().splitlines()]
    assert not [e for e in events if e["kind"].startswith("reflection")]


def test_an_offline_expert_the_code_does_not_know_fails_as_a_table_error_naming_it() -> None:
    """It raised a bare KeyError, outside the one error hierarchy (the README's recipe for adding an expert)."""
    import dataclasses

    from costa.errors import TableError
    from costa.reflect.experts import offline_experts

    protocol = load_protocol()
    unknown = dataclasses.replace(protocol.offline[0], name="aesthete")
    with pytest.raises(TableError, match="unknown offline expert 'aesthete'"):
        offline_experts(dataclasses.replace(protocol, offline=(*protocol.offline, unknown)))
    assert [type(e).__name__ for e in offline_experts(protocol)] == [
        "InstructionExpert", "PreservationExpert", "PerceptionExpert"
    ]  # fmt: skip
