"""`python -m costa plan` as a subprocess: offline, and with OPENAI_BASE_URL pointing at a FAKE OpenAI-compatible
server run by the test (the real `openai` client inside the CLI talks HTTP to it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from costa.types import Plan
from tests.fake_openai import FakeOpenAI, chat, error

ROOT = Path(__file__).resolve().parents[1]
LLM_PLAN = {
    "form": "tree",
    "subtasks": [
        {"id": "r", "kind": "object_recoloration", "target": "car", "result": "red", "parents": ["x"]},
        {"id": "x", "kind": "object_replacement", "target": "truck", "result": "car", "parents": []},
    ],
    "unsupported": [{"text": "make it fly", "reason": "no subtask kind moves objects"}],
    "question": None,
}


def costa(*args: str, home: Path, **env: str) -> subprocess.CompletedProcess:
    full = {**os.environ, "COSTA_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    for key in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "COSTA_LLM_MODEL", "COSTA_LLM_PRICE_IN", "COSTA_LLM_PRICE_OUT"):
        full.pop(key, None)
    full.update(env)
    return subprocess.run(
        [sys.executable, "-m", "costa", *args], cwd=ROOT, env=full, capture_output=True, text=True, timeout=120
    )


def llm_env(fake: FakeOpenAI, **extra: str) -> dict[str, str]:
    return {
        "OPENAI_BASE_URL": fake.base_url,
        "COSTA_LLM_MODEL": "fake-model",
        "COSTA_LLM_BACKOFF": "0",
        "COSTA_LLM_TIMEOUT": "5",
        **extra,
    }


def test_offline_plan_lists_subtasks_in_order_and_unsupported_parts(_costa_home) -> None:
    r = costa("plan", "Replace the truck with a car and make it red, then denoise the photo", home=_costa_home)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "plan (rules, chain):"
    assert lines[1] == "  s1. Object Replacement target='truck' result='car'"
    assert lines[2] == "  s2. Object Recoloration target='car' result='red' after s1"
    assert "unsupported: 'denoise the photo'" in lines[3] and "not a subtask kind" in lines[3]
    assert "llm" not in r.stdout


def test_plan_json_round_trips_and_names_kinds(_costa_home) -> None:
    r = costa("plan", "remove the text 'FREE' and make it brighter", "--json", home=_costa_home)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert [(s["kind"], s["name"]) for s in data["subtasks"]] == [
        ("text_removal", "Text Removal"),
        ("global_adjustment", "Global Adjustment"),
    ]
    assert data["subtasks"][0]["params"] == {"literal": True}
    plan = Plan.from_json(r.stdout)
    assert plan.planner == "rules" and Plan.from_json(plan.to_json()) == plan


def test_plan_through_the_fake_llm_with_image_prints_costs(tmp_path: Path, _costa_home) -> None:
    img = tmp_path / "street.png"
    Image.fromarray(np.full((700, 1000, 3), 120, np.uint8)).save(img)
    with FakeOpenAI([chat(LLM_PLAN, prompt_tokens=1500, completion_tokens=120)]) as fake:
        env = llm_env(fake, COSTA_LLM_PRICE_IN="2", COSTA_LLM_PRICE_OUT="10")
        r = costa("plan", "Replace the truck with a car and make it red, make it fly", "--image", str(img),
                  home=_costa_home, **env)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "llm   plan: fake-model, 1500 prompt + 120 completion tokens" in r.stdout
    assert "cost 0.004200" in r.stdout
    assert "plan (llm:fake-model, tree):" in r.stdout
    assert "s1. Object Replacement target='truck' result='car'" in r.stdout
    assert "s2. Object Recoloration target='car' result='red' after s1" in r.stdout
    assert "unsupported: 'make it fly' — no subtask kind moves objects" in r.stdout
    parts = fake.chat_requests[0]["messages"][1]["content"]
    assert any(p["type"] == "image_url" and p["image_url"]["url"].startswith("data:image/png") for p in parts)


def test_plan_json_through_the_fake_keeps_stdout_pure_json(_costa_home) -> None:
    with FakeOpenAI([chat(LLM_PLAN)]) as fake:
        r = costa("plan", "Replace the truck with a car and make it red", "--json", home=_costa_home, **llm_env(fake))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["planner"] == "llm:fake-model"
    assert "llm   plan: fake-model" in r.stderr


def test_llm_failure_falls_back_and_says_why(_costa_home) -> None:
    with FakeOpenAI([error(500), error(500), chat("no json, sorry"), chat("still none")]) as fake:
        r = costa("plan", "remove the cat", home=_costa_home, **llm_env(fake, COSTA_LLM_RETRIES="1"))
    assert r.returncode == 0, r.stderr
    assert "planner fallback: LLM planning failed (2 request(s) failed, the last: HTTP 500" in r.stdout
    assert "plan (rules, chain):" in r.stdout and "s1. Object Removal target='cat'" in r.stdout
    assert len(fake.chat_requests) == 2


def test_llm_invalid_twice_falls_back(_costa_home) -> None:
    with FakeOpenAI([chat("no json, sorry"), chat('{"subtasks": [{"id": "a"}]}')]) as fake:
        r = costa("plan", "remove the cat", home=_costa_home, **llm_env(fake))
    assert r.returncode == 0, r.stderr
    assert "the LLM's plan was unusable twice" in r.stdout and "subtasks.0.kind: Field required" in r.stdout
    assert "s1. Object Removal target='cat'" in r.stdout


@pytest.mark.parametrize(
    ("instruction", "message"),
    [
        ("   ", "instruction is empty"),
        ("make the wall red and blue", "the wall cannot be both red and blue: which colour should it be?"),
        ("hello there", "no edit could be planned"),
        ("remove the cat " * 1400, "the planner reads at most 2,000"),
    ],
    ids=["empty", "contradiction", "no-edit", "too-long"],
)
def test_bad_instructions_exit_2_with_a_message(instruction: str, message: str, _costa_home) -> None:
    r = costa("plan", instruction, home=_costa_home)
    assert r.returncode == 2, r.stdout + r.stderr
    assert message in r.stderr and "Traceback" not in r.stderr


def test_missing_image_is_a_clear_error(_costa_home) -> None:
    r = costa("plan", "remove the cat", "--image", "nope.png", home=_costa_home)
    assert r.returncode == 2 and "does not exist" in r.stderr


def test_edit_reports_llm_fallback_and_costs(tmp_path: Path, _costa_home) -> None:
    """`costa edit` with the fake LLM: the LLM call and its cost appear, and the edit still runs on the plan."""
    img = np.full((120, 160, 3), 230, np.uint8)
    img[40:80, 50:110] = (40, 60, 200)
    src, out = tmp_path / "blob.png", tmp_path / "out.png"
    Image.fromarray(img).save(src)
    events = tmp_path / "events.jsonl"
    reply = {"subtasks": [{"id": "s1", "kind": "object_recoloration", "target": None, "result": "pink"}]}
    with FakeOpenAI([error(503), chat(reply, prompt_tokens=800, completion_tokens=40)]) as fake:
        env = llm_env(fake, COSTA_LLM_PRICE_IN="1", COSTA_LLM_PRICE_OUT="1")
        # --no-reflect: the reflection's VLM experts would also call this fake endpoint (their calls are tested apart)
        r = costa("edit", str(src), "recolor it to pink", "--box", "40,30,80,60", "-o", str(out), "--events",
                  str(events), "--no-reflect", home=_costa_home, **env)  # fmt: skip
    assert r.returncode in (0, 3), r.stdout + r.stderr
    assert "llm   plan: fake-model failed after" in r.stdout and "HTTP 503" in r.stdout
    assert "llm calls 2 (1 failed), tokens 800 prompt + 40 completion" in r.stdout and "cost 0.000840" in r.stdout
    kinds = [json.loads(line)["kind"] for line in events.read_text().splitlines()]
    assert kinds[:3] == ["llm_call", "llm_call", "plan_ready"] and kinds[-1] == "turn_done"
