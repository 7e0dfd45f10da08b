"""The LLM aggregator in the reflection loop, against the FAKE OpenAI-compatible server (tests/fake_openai.py): its
merge is recorded in the `Reflection` event, its fix's action drives the retry, it can never change S, and when it is
down or answers nonsense the turn still completes with a note."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from costa.eventlog import event_from_dict, event_to_dict
from costa.events import LlmCall, Reflection, ReflectionRetry, TurnDone
from costa.reflect.report import describe_event, panel_markdown
from costa.reflect.vlm_experts import parse_aggregator_reply
from tests.fake_openai import FakeOpenAI, chat, error
from tests.test_reflect import _judge, _run

FIX = "the disc is still red on its left half; run the recolouring again with its next parameters"


def _table(tmp_path: Path, offline: bool = False) -> Path:
    """The shipped table with one VLM role and the shipped aggregator rubric (offline experts optional)."""
    data = yaml.safe_load(Path("tool_tables/reflection.yaml").read_text())
    assert data["aggregator_rubric"]
    if not offline:
        data["offline"] = []
    data["vlm_roles"] = data["vlm_roles"][:1]
    path = tmp_path / "reflection.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _refl(events: list) -> list[Reflection]:
    return [e for e in events if isinstance(e, Reflection)]


def test_aggregator_merges_and_its_action_drives_the_retry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    merge = {"keep": ["the disc keeps its shape"], "fix": [{"text": FIX, "action": "next_params"}]}
    script = [chat(_judge(3.0)), chat(merge), chat(_judge(8.0)), chat({"keep": ["blue all over"], "fix": []})]
    with FakeOpenAI(script) as fake:
        events = _run(fake, _table(tmp_path), monkeypatch)
    assert [r["messages"][0]["content"].startswith("Merge") for r in fake.chat_requests] == [False, True, False, True]
    agg = fake.chat_requests[1]["messages"]
    assert "looks wrong" in agg[1]["content"] and "next_params" in agg[0]["content"]  # the feedback, the actions
    refl = _refl(events)
    assert [(r.attempt, r.decision) for r in refl] == [(1, "retry"), (2, "accept")]
    assert refl[0].merged == {"keep": ["the disc keeps its shape"], "fix": [{"text": FIX, "action": "next_params"}],
                              "ignored": [], "note": ""}  # fmt: skip
    assert refl[1].merged["keep"] == ["blue all over"]
    retry = next(e for e in events if isinstance(e, ReflectionRetry))
    # The default order would try other_path first; the aggregator's action goes first and its fix is the reason.
    assert (retry.attempt, retry.action, retry.reason) == (2, "next_params", FIX)
    purposes = [e.purpose for e in events if isinstance(e, LlmCall)]
    assert purposes.count("reflection aggregator") == 2  # its calls reach the ledger
    done = events[-1]
    assert isinstance(done, TurnDone) and done.ok
    # The merge shows in the panel and the CLI line, and survives the event log (costa edit --events).
    assert "fix: " + FIX + " (→ next_params)" in panel_markdown(refl)
    assert "aggregator: keep: the disc keeps its shape" in describe_event(refl[0])
    back = event_from_dict(event_to_dict(refl[0]))
    assert back == refl[0]


def test_aggregator_cannot_change_the_score(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The aggregator answers a score (and a fix asking for a retry); S stays the expert's 8.0 and accepts."""
    merge = {"score": 0.0, "semantic_alignment": 0.0, "keep": [], "fix": [{"text": "redo it", "action": "other_path"}]}
    with FakeOpenAI([chat(_judge(8.0)), chat(merge)]) as fake:
        events = _run(fake, _table(tmp_path), monkeypatch)
    refl = _refl(events)
    assert [(r.score, r.decision) for r in refl] == [(8.0, "accept")]
    assert refl[0].score == refl[0].experts[0]["score"] and refl[0].merged["fix"][0]["text"] == "redo it"
    assert not [e for e in events if isinstance(e, ReflectionRetry)] and events[-1].ok
    assert len(fake.chat_requests) == 2


def test_aggregator_unknown_action_is_ignored_and_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    merge = {"keep": [], "fix": [{"text": "repaint it by hand", "action": "repaint"}]}
    script = [chat(_judge(3.0)), chat(merge), chat(_judge(8.0)), chat({"keep": ["ok"], "fix": []})]
    with FakeOpenAI(script) as fake:
        events = _run(fake, _table(tmp_path), monkeypatch)
    first = _refl(events)[0]
    assert first.merged["fix"] == [{"text": "repaint it by hand", "action": ""}]
    assert first.merged["ignored"] == ["repaint"] and "repaint" in first.merged["note"]
    retry = next(e for e in events if isinstance(e, ReflectionRetry))
    assert retry.reason == "repaint it by hand"  # still the merged fix, by the table's first usable action
    assert events[-1].ok and len(fake.chat_requests) == 4


def test_aggregator_malformed_turn_completes_with_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI([chat(_judge(8.0)), chat("I think it is fine.")]) as fake:
        events = _run(fake, _table(tmp_path), monkeypatch)
    refl = _refl(events)
    assert [(r.score, r.decision) for r in refl] == [(8.0, "accept")]
    assert refl[0].merged["keep"] == [] and refl[0].merged["fix"] == []
    assert refl[0].merged["note"].startswith("aggregator answer unusable")
    assert "note: aggregator answer unusable" in panel_markdown(refl)
    assert isinstance(events[-1], TurnDone) and events[-1].ok


def test_aggregator_down_turn_completes_with_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI([chat(_judge(3.0)), error(500, "aggregator down"), chat(_judge(8.0)), error(503)]) as fake:
        events = _run(fake, _table(tmp_path), monkeypatch)
    refl = _refl(events)
    assert refl[0].merged["note"].startswith("aggregator unavailable") and refl[0].merged["fix"] == []
    retry = next(e for e in events if isinstance(e, ReflectionRetry))
    assert retry.reason  # the experts' own feedback drives the retry
    failed = [e for e in events if isinstance(e, LlmCall) and e.purpose == "reflection aggregator"]
    assert failed and not failed[0].ok  # a failed call still reaches the ledger
    assert isinstance(events[-1], TurnDone) and events[-1].ok and events[-1].image is not None


def test_no_aggregator_call_when_only_offline_experts_judged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The VLM expert is dropped (malformed twice): only offline experts judged, so the aggregator is not asked."""
    with FakeOpenAI([chat("nope"), chat("still nope")]) as fake:
        events = _run(fake, _table(tmp_path, offline=True), monkeypatch)
    assert len(fake.chat_requests) == 2 and all(r.merged == {} for r in _refl(events))
    assert not [e for e in events if isinstance(e, LlmCall) and e.purpose == "reflection aggregator"]


def test_old_reflection_events_still_load() -> None:
    old = {"kind": "reflection", "subtask_id": "s1", "attempt": 1, "experts": [], "score": 9.0, "decision": "accept"}
    ev = event_from_dict(old)
    assert isinstance(ev, Reflection) and ev.merged == {}


def test_parse_aggregator_reply_refuses_what_it_cannot_read() -> None:
    with pytest.raises(ValueError, match="no 'keep' or 'fix'"):
        parse_aggregator_reply('{"score": 3}', ("other_path",))
    with pytest.raises(ValueError):
        parse_aggregator_reply('{"fix": [[1, 2]]}', ("other_path",))
    keep, fix, ignored = parse_aggregator_reply('{"fix": "too dark"}', ("other_path",))
    assert keep == () and [f.text for f in fix] == ["too dark"] and ignored == ()


def test_cli_events_carry_the_merge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`costa edit --events` with the LLM planner and the reflection panel on the FAKE endpoint: the aggregator's
    merge is in the written `reflection` events and on the CLI's reflection line."""
    import io
    import json

    from PIL import Image

    from costa.cli import main
    from tests.test_reflect import _scene

    image, box = _scene()
    Image.fromarray(image).save(tmp_path / "disc.png")
    plan = {"form": "chain", "subtasks": [{"id": "s1", "kind": "object_recoloration", "target": "object",
            "result": "blue", "params": {}, "parents": []}], "unsupported": [], "question": None}  # fmt: skip
    merge = {"keep": ["the disc keeps its shape"], "fix": [{"text": FIX, "action": "next_params"}]}
    script = [chat(plan), chat(_judge(3.0)), chat(merge), chat(_judge(8.0)), chat({"keep": ["blue"], "fix": []})]
    with FakeOpenAI(script) as fake:
        env = {"OPENAI_BASE_URL": fake.base_url, "COSTA_LLM_MODEL": "fake-vlm", "COSTA_LLM_RETRIES": "0",
               "COSTA_LLM_TIMEOUT": "5", "COSTA_REFLECTION_TABLE": str(_table(tmp_path))}  # fmt: skip
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        out = io.StringIO()
        code = main(["edit", str(tmp_path / "disc.png"), "Make the object blue.", "--box",
                     f"{box.x},{box.y},{box.w},{box.h}", "-o", str(tmp_path / "out.png"),
                     "--events", str(tmp_path / "ev.jsonl")], out)  # fmt: skip
    assert code == 0, out.getvalue()
    events = [json.loads(line) for line in (tmp_path / "ev.jsonl").read_text().splitlines()]
    refl = [e for e in events if e["kind"] == "reflection"]
    assert [r["decision"] for r in refl] == ["retry", "accept"]
    assert refl[0]["merged"]["fix"] == [{"text": FIX, "action": "next_params"}]
    assert [e["action"] for e in events if e["kind"] == "reflection_retry"] == ["next_params"]
    assert f"fix: {FIX} (→ next_params)" in out.getvalue()
