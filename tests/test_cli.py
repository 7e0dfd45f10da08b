"""The CLI through its real interface: `python -m costa …` as a subprocess, on generated images."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.text_helpers import Line, background, draw

ROOT = Path(__file__).resolve().parents[1]


def costa(*args: str, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "COSTA_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    env.pop("OPENAI_BASE_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "costa", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def sale_png(tmp_path: Path) -> Path:
    img = draw(background("flat", 480, 200), [Line("SALE", (60, 50), 64, (190, 20, 20))])
    p = tmp_path / "sale.png"
    Image.fromarray(img).save(p)
    return p


def read_text(path: Path) -> str:
    from costa.tools.ocr import RapidOcrReader

    regions = RapidOcrReader().read(np.asarray(Image.open(path).convert("RGB")))
    return " ".join(r.text for r in regions)


@pytest.mark.slow
def test_edit_replaces_text_and_prints_plan_path_checks_ledger(sale_png: Path, tmp_path: Path, _costa_home) -> None:
    out = tmp_path / "out.png"
    events = tmp_path / "events.jsonl"
    r = costa(
        "edit",
        str(sale_png),
        "replace the text 'SALE' with 'OPEN'",
        "-o",
        str(out),
        "--events",
        str(events),
        home=_costa_home,
    )
    assert r.returncode == 0, r.stderr + r.stdout
    assert "Text Replacement target='SALE' result='OPEN'" in r.stdout
    assert "chosen path: rapidocr_detect (s1) → text_replace_" in r.stdout
    assert "cost ledger:" in r.stdout and "tool runs" in r.stdout
    assert "pass" in r.stdout
    text = read_text(out)
    assert "OPEN" in text.upper() and "SALE" not in text.upper()
    kinds = [json.loads(line)["kind"] for line in events.read_text().splitlines()]
    assert kinds[0] == "plan_ready" and kinds[-1] == "turn_done"
    assert {"subgraph_built", "node_queued", "node_popped", "tool_started", "tool_finished", "path_chosen"} <= set(
        kinds
    )


@pytest.mark.slow
def test_edit_recolours_a_boxed_region(tmp_path: Path, _costa_home) -> None:
    img = np.full((200, 300, 3), 230, np.uint8)
    yy, xx = np.mgrid[:200, :300]
    inside = ((xx - 150) / 70) ** 2 + ((yy - 100) / 50) ** 2 <= 1
    shade = (0.6 + 0.4 * (xx - 80) / 140).clip(0.5, 1.0)
    img[inside] = (np.array([40, 60, 200]) * shade[inside, None]).astype(np.uint8)
    src, out = tmp_path / "blob.png", tmp_path / "pink.png"
    Image.fromarray(img).save(src)
    r = costa("edit", str(src), "recolor the blob to pink", "--box", "70,40,160,120", "-o", str(out), home=_costa_home)
    assert r.returncode == 0, r.stderr + r.stdout
    res = np.asarray(Image.open(out).convert("RGB")).astype(int)
    # Inside the object red dominates blue now; outside the box nothing changed.
    centre = res[90:110, 140:160].reshape(-1, 3).mean(0)
    assert centre[0] > centre[2]
    assert np.abs(res[:30] - img[:30].astype(int)).max() == 0


def test_doctor_lists_every_tool_with_reasons(_costa_home) -> None:
    r = costa("doctor", home=_costa_home)
    assert r.returncode == 0, r.stderr
    assert "ready   rapidocr_detect" in r.stdout
    assert "missing grounding_dino" in r.stdout and "weights" in r.stdout
    r = costa("doctor", "--json", home=_costa_home)
    rows = json.loads(r.stdout)
    assert {row["tool"] for row in rows} >= {"rapidocr_detect", "sam", "sd_inpaint"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.png", "remove the text"], "does not exist"),
        (["{corrupt}", "remove the text"], "corrupt"),
        (["{img}", "   "], "instruction is empty"),
        (["{img}", "hello there"], "no edit could be planned"),
        (["{img}", "recolor it to pink", "--box", "400,150,100,100"], "outside the 480x200 image"),
        (["{img}", "recolor it to pink", "--mask", "{small_mask}"], "but the image is 480x200"),
        (["{img}", "recolor it to pink", "--mask", "{empty_mask}"], "is empty"),
        (["{img}", "remove the text", "--alpha", "3"], "alpha must be a number in [0, 2]"),
        (["{img}", "replace the text 'XYZZY' with 'OPEN'"], "no tool path passed its checks"),
    ],
)
def test_bad_input_gets_a_clear_message_and_no_output(args, message, sale_png: Path, tmp_path: Path, _costa_home):
    corrupt = tmp_path / "corrupt.png"
    corrupt.write_bytes(sale_png.read_bytes()[:200])
    small_mask = tmp_path / "small.png"
    Image.fromarray(np.full((10, 10), 255, np.uint8)).save(small_mask)
    empty_mask = tmp_path / "empty.png"
    Image.fromarray(np.zeros((200, 480), np.uint8)).save(empty_mask)
    subs = {"{img}": str(sale_png), "{corrupt}": str(corrupt), "{small_mask}": str(small_mask)}
    subs["{empty_mask}"] = str(empty_mask)
    args = [subs.get(a, a) for a in args]
    out = tmp_path / "never.png"
    before = sale_png.read_bytes()
    r = costa("edit", *args, "-o", str(out), home=_costa_home)
    assert r.returncode == 2, r.stdout + r.stderr
    assert message in r.stderr
    assert "Traceback" not in r.stderr
    assert not out.exists()
    assert sale_png.read_bytes() == before


def test_plan_command_prints_subtasks(_costa_home) -> None:
    r = costa("plan", "replace the text 'SALE' with 'OPEN' and highlight the word 'today'", home=_costa_home)
    assert r.returncode == 0, r.stderr
    assert "Text Replacement target='SALE' result='OPEN'" in r.stdout
    assert "Keyword Highlighting target='today'" in r.stdout
    r = costa("plan", "replace the text 'SALE' with 'OPEN'", "--json", home=_costa_home)
    assert json.loads(r.stdout)["subtasks"][0]["kind"] == "text_replacement"
