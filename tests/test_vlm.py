"""The shared LLM client's helpers, and the VLM quality judge and context featurer (FAKE endpoint) with their offline
alternatives."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from costa.llm_client import LlmClient, LlmConfig, image_data_url, parse_json_object, quote_data
from costa.tables import load_tables
from costa.types import Subtask
from costa.vlm import (
    ChangeJudge,
    ImageStatsFeaturer,
    Judgement,
    VlmFeaturer,
    VlmJudge,
    context_featurer_for,
    object_size,
    quality_judge_for,
)
from tests.fake_openai import FakeOpenAI, chat, error

TABLES = load_tables()
RECOLOUR = Subtask(id="s1", kind="object_recoloration", target="square", result="red")


def client_for(fake: FakeOpenAI, retries: int = 0) -> LlmClient:
    config = LlmConfig(fake.base_url, None, "fake-vlm", timeout_seconds=5, retries=retries, backoff_seconds=0.0)
    return LlmClient(config)


@pytest.fixture
def images() -> tuple[np.ndarray, np.ndarray]:
    before = np.full((120, 160, 3), 90, np.uint8)
    after = before.copy()
    after[30:70, 40:100] = (220, 30, 30)
    return before, after


# -------------------------------------------------------------------------------------------------- client bits


def test_parse_json_object_reads_fenced_and_wrapped_answers() -> None:
    assert parse_json_object('{"a": 1}') == {"a": 1}
    assert parse_json_object('Here you go:\n```json\n{"a": [1, 2]}\n```\nDone.') == {"a": [1, 2]}
    assert parse_json_object('The answer is {"score": 0.5} I think') == {"score": 0.5}
    with pytest.raises(ValueError, match="expected a JSON object"):
        parse_json_object("[1, 2]")
    with pytest.raises(ValueError, match="the answer began 'no json here'"):
        parse_json_object("no json here")
    with pytest.raises(ValueError, match="empty"):
        parse_json_object("   ")


def test_quote_data_is_json_with_no_angle_brackets() -> None:
    quoted = quote_data('say "hi" <<<END>>> & bye\nnow')
    assert "<" not in quoted and ">" not in quoted and "\n" not in quoted
    assert json.loads(quoted) == 'say "hi" <<<END>>> & bye\nnow'


def test_image_data_url_keeps_small_images_and_aspect() -> None:
    small = np.zeros((100, 50, 3), np.uint8)
    decoded = Image.open(io.BytesIO(base64.b64decode(image_data_url(small).split(",", 1)[1])))
    assert decoded.size == (50, 100)
    tall = np.zeros((2000, 500, 3), np.uint8)
    decoded = Image.open(io.BytesIO(base64.b64decode(image_data_url(tall).split(",", 1)[1])))
    assert decoded.size == (128, 512)


def test_cost_with_one_price_counts_the_other_as_zero() -> None:
    assert LlmConfig(None, "k", "m", price_in=1.0).cost(2_000_000, 500) == pytest.approx(2.0)
    assert LlmConfig(None, "k", "m").cost(10, 10) is None
    assert "k" not in LlmConfig("http://x/v1", "secret-key", "m").describe()


# ------------------------------------------------------------------------------------------------------ judges


def test_offline_judge_checks_the_change_matches_the_kind(images) -> None:
    before, after = images
    judge = ChangeJudge(TABLES.subtasks)
    assert judge.judge(RECOLOUR, before, after).score == 1.0
    nothing = judge.judge(RECOLOUR, before, before)
    assert nothing.score == 0.0 and "no visible change" in nothing.reason
    everything = judge.judge(RECOLOUR, before, 255 - before)
    assert everything.score == 0.4 and "almost the whole image" in everything.reason
    detect = Subtask(id="s1", kind="object_detection", target="square")
    assert judge.judge(detect, before, before).score == 1.0
    assert judge.judge(detect, before, after).score == 0.0
    upscale = Subtask(id="s1", kind="image_upscaling", result="2")
    assert judge.judge(upscale, before, np.repeat(np.repeat(before, 2, 0), 2, 1)).score == 1.0
    assert judge.judge(upscale, before, before).score == 0.0
    with pytest.raises(ValueError):
        Judgement(1.5, "x", "offline")


def test_vlm_judge_scores_through_the_fake(images, tmp_path: Path) -> None:
    before, after = images
    with FakeOpenAI([chat({"score": 0.85, "reason": "the square is red now"}, prompt_tokens=900)]) as fake:
        j = VlmJudge(client_for(fake), TABLES.subtasks).judge(RECOLOUR, before, after)
    assert (j.score, j.reason, j.judge) == (0.85, "the square is red now", "vlm:fake-model")
    assert len(j.calls) == 1 and j.calls[0].purpose == "quality check" and j.calls[0].prompt_tokens == 900
    content = fake.chat_requests[0]["messages"][1]["content"]
    assert sum(p["type"] == "image_url" for p in content) == 2
    assert json.dumps("Object Recoloration") in content[0]["text"]  # the subtask arrives as JSON data


def test_vlm_judge_reads_a_0_to_10_score_and_falls_back_on_nonsense(images) -> None:
    before, after = images
    with FakeOpenAI([chat({"score": 7, "reason": "ok"}), chat("I think it is fine"), error(500)]) as fake:
        judge = VlmJudge(client_for(fake), TABLES.subtasks)
        assert judge.judge(RECOLOUR, before, after).score == pytest.approx(0.7)
        unusable = judge.judge(RECOLOUR, before, after)
        down = judge.judge(RECOLOUR, before, after)
    assert unusable.judge == "offline" and "unusable answer" in unusable.reason and unusable.score == 1.0
    assert down.judge == "offline" and "HTTP 500" in down.reason and len(down.calls) == 1


def test_factories_choose_offline_without_a_client() -> None:
    assert isinstance(quality_judge_for(None, TABLES.subtasks), ChangeJudge)
    assert isinstance(context_featurer_for(None), ImageStatsFeaturer)


# ---------------------------------------------------------------------------------------------------- features


def test_offline_features_measure_pixels_and_the_mask(images) -> None:
    _, after = images
    mask = np.zeros(after.shape[:2], bool)
    mask[30:70, 40:100] = True
    f = ImageStatsFeaturer().features(RECOLOUR, after, mask)
    assert f.source == "offline"
    assert f.values["width"] == 160 and f.values["height"] == 120
    assert f.values["object_area_share"] == pytest.approx(2400 / 19200, abs=1e-4)
    assert f.values["object_size"] == "medium"
    assert 0.0 <= f.values["brightness"] <= 1.0 and f.values["edge_density"] > 0
    assert "object_size" not in ImageStatsFeaturer().features(RECOLOUR, after).values
    assert [object_size(x) for x in (0.01, 0.1, 0.5)] == ["small", "medium", "large"]


def test_vlm_features_add_to_the_offline_ones(images) -> None:
    _, after = images
    reply = {"object_size": "small", "background": "cluttered", "text_on_flat_background": "maybe"}
    with FakeOpenAI([chat(reply), error(503)]) as fake:
        featurer = VlmFeaturer(client_for(fake), TABLES.subtasks)
        f = featurer.features(RECOLOUR, after)
        down = featurer.features(RECOLOUR, after)
    assert f.values["object_size"] == "small" and f.values["background"] == "cluttered"
    assert "text_on_flat_background" not in f.values and "text_on_flat_background='maybe'" in f.note
    assert f.source == "offline+vlm:fake-model" and "brightness" in f.values
    assert down.source == "offline" and "HTTP 503" in down.note and len(down.calls) == 1
