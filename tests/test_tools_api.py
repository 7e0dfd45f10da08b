"""API tools against the FAKE OpenAI-compatible server (tests/fake_openai.py): scripted replies, real HTTP."""

from __future__ import annotations

import numpy as np
import pytest

from costa.errors import ToolError
from costa.testing.calibration import fake_table
from costa.types import Box, EditState, Subtask, TextRegion
from tests.fake_openai import FakeOpenAI, chat, error


def _services(monkeypatch, fake: FakeOpenAI):
    from costa.services import Services

    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    monkeypatch.setenv("COSTA_LLM_RETRIES", "0")
    return Services()


def test_api_tools_need_an_endpoint() -> None:
    from costa.services import Services

    why = Services().why_not("llm_caption")
    assert why is not None and "OPENAI_BASE_URL" in why


def test_caption_landmark_sentiment_qa_and_caption_check(monkeypatch) -> None:
    image = np.full((64, 96, 3), 200, np.uint8)
    script = [
        chat({"caption": "A grey square."}),
        chat({"landmark": "Eiffel Tower, Paris"}),
        chat({"sentiment": "Positive"}),
        chat({"answer": "555-0100"}),
        chat({"verdict": "inconsistent"}),
    ]
    with FakeOpenAI(script) as fake:
        services = _services(monkeypatch, fake)
        assert services.why_not("llm_caption") is None
        cap = services.tool("llm_caption")(EditState(image), Subtask(id="s", kind="image_captioning"), {})
        assert cap.artifacts == {"caption": "A grey square."}
        land = services.tool("llm_landmark")(EditState(image), Subtask(id="s", kind="landmark_detection"), {})
        assert land.artifacts == {"label": "Eiffel Tower, Paris"}
        sent = services.tool("llm_sentiment")(EditState(image), Subtask(id="s", kind="sentiment_analysis"), {})
        assert sent.artifacts == {"label": "positive"}
        regions = (TextRegion(Box(1, 1, 20, 8), "CALL 555-0100", 0.9),)
        qa = services.tool("llm_text_qa")(
            EditState(image, {"text_regions": regions}),
            Subtask(id="s", kind="question_answering_text", target="what is the phone number?"),
            {},
        )
        assert qa.artifacts == {"text": "555-0100"}
        check = services.tool("llm_caption_check")(
            EditState(image), Subtask(id="s", kind="caption_consistency_check", target="a red car"), {}
        )
        assert check.artifacts == {"label": "inconsistent"}
        reqs = fake.chat_requests
        assert len(reqs) == 5
        user = reqs[3]["messages"][1]["content"]
        assert '"what is the phone number?"' in user[0]["text"] and '"CALL 555-0100"' in user[0]["text"]
        assert user[1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_endpoint_failure_and_bad_answers_are_tool_errors(monkeypatch) -> None:
    image = np.full((32, 32, 3), 0, np.uint8)
    with FakeOpenAI([error(500), chat({"sentiment": "ecstatic"}), chat("not json")]) as fake:
        services = _services(monkeypatch, fake)
        with pytest.raises(ToolError, match="endpoint failed"):
            services.tool("llm_caption")(EditState(image), Subtask(id="s", kind="image_captioning"), {})
        with pytest.raises(ToolError, match="not one of positive"):
            services.tool("llm_sentiment")(EditState(image), Subtask(id="s", kind="sentiment_analysis"), {})
        with pytest.raises(ToolError, match="not the JSON"):
            services.tool("llm_landmark")(EditState(image), Subtask(id="s", kind="landmark_detection"), {})


def test_llm_calls_reach_the_turn_control(monkeypatch) -> None:
    from costa.models.control import TurnControl, using_control

    control = TurnControl()
    with FakeOpenAI([chat({"caption": "x"}, prompt_tokens=10, completion_tokens=2)]) as fake:
        services = _services(monkeypatch, fake)
        with using_control(control, "s1", "llm_caption", 0):
            services.tool("llm_caption")(
                EditState(np.zeros((8, 8, 3), np.uint8)), Subtask(id="s", kind="image_captioning"), {}
            )
    assert [(e.kind, e.prompt_tokens) for e in control.events] == [("llm_call", 10)]


def test_a_tools_llm_call_is_in_the_turns_ledger_and_record(tmp_path, monkeypatch) -> None:
    """Through the session core: the planner's request and the captioning tool's request both count in the turn's
    LLM totals (the page's ledger) and are kept with the turn's events in the store."""
    from PIL import Image

    from costa.config import Settings
    from costa.services import Services
    from costa.session import SessionCore, TurnOptions
    from costa.store import Store

    plan = {
        "form": "chain",
        "subtasks": [{"id": "s1", "kind": "image_captioning", "target": None, "result": None, "parents": []}],
        "unsupported": [],
        "question": None,
    }
    replies = [chat(plan, prompt_tokens=100, completion_tokens=20), chat({"caption": "A grey square."}, 10, 2)]
    with FakeOpenAI(replies) as fake:
        settings = Settings(
            calibration_table=fake_table(),
            home=tmp_path / "home",
            openai_base_url=fake.base_url,
            llm_model="fake-model",
            llm_retries=0,
            reflect=False,
        )
        core = SessionCore(Services(settings), Store(tmp_path / "store"))
        try:
            sid = core.open_session(None, None).id
            Image.new("RGB", (64, 48), (128, 128, 128)).save(tmp_path / "grey.png")
            core.upload(sid, None, tmp_path / "grey.png")
            opts = TurnOptions.validate(core.settings)
            view = [v for v, _ in core.run(core.prepare(sid, None, "describe the image", opts))][-1]
        finally:
            core.close()
    assert any(c.tool == "llm_caption" and c.seconds is not None for c in view.calls), view.errors
    assert [c.prompt_tokens for c in view.llm] == [100, 10]  # the planner's, then the tool's
    assert view.totals()["llm_calls"] == 2 and view.totals()["llm_tokens"] == 132
    stored = Store(tmp_path / "store").turns(sid)[-1]
    assert sum(1 for e in stored.events if e["kind"] == "llm_call") == 2
