"""The CLI on the session core, as a subprocess: `--session` continues a stored session (history given to the
planner, the result stored as a numbered version), an LLM planner gets the image's OCR text, and a bundle's rerun
commands run exactly as written — shell-quoted, complete (clicks, box, mask, eager) — without executing the user's
text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from costa.config import Settings
from costa.services import Services
from costa.session import Pointing, SessionCore, TurnOptions
from costa.store import Store
from costa.testing.calibration import fake_table
from tests.text_helpers import Line, background, draw

ROOT = Path(__file__).resolve().parents[1]
REPLACE = "replace the text 'SALE' with 'OPEN'"
pytestmark = pytest.mark.slow


def costa(*args: str, home: Path, cwd: Path = ROOT, **env_extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COSTA_HOME": str(home), "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT), **env_extra}
    if "OPENAI_BASE_URL" not in env_extra:
        env.pop("OPENAI_BASE_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "costa", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def sale_png(tmp_path: Path) -> Path:
    p = tmp_path / "sale.png"
    Image.fromarray(draw(background("flat", 480, 200), [Line("SALE", (60, 50), 64, (190, 20, 20))])).save(p)
    return p


def test_session_continues_a_stored_session_with_its_history(sale_png: Path, tmp_path: Path) -> None:
    from tests.fake_openai import FakeOpenAI, chat

    home = tmp_path / "home"
    sid = Store(home).create_session().id
    plan = {
        "form": "chain",
        "subtasks": [{"id": "s1", "kind": "text_replacement", "target": "SALE", "result": "OPEN", "params": {}}],
        "unsupported": [],
        "question": None,
    }
    back = {**plan, "subtasks": [{**plan["subtasks"][0], "target": "OPEN", "result": "SOON"}]}
    with FakeOpenAI([chat(plan), chat(back)]) as fake:
        llm = {"OPENAI_BASE_URL": fake.base_url, "COSTA_LLM_MODEL": "fake-model", "COSTA_LLM_RETRIES": "0"}
        llm["COSTA_REFLECT"] = "0"  # its VLM experts would ask the fake too (tested in tests/test_reflect.py)
        first = costa("edit", str(sale_png), REPLACE, "-o", str(tmp_path / "a.png"), "--session", sid, home=home, **llm)
        assert first.returncode == 0, first.stdout + first.stderr
        assert "stored as version v2" in first.stdout and "(turn 1)" in first.stdout
        again = "replace the text 'OPEN' with 'SOON'"  # ('SALE' changes it back: a restore, no planning)
        second = costa("edit", again, "-o", str(tmp_path / "b.png"), "--session", sid, home=home, **llm)
        assert second.returncode == 0, second.stdout + second.stderr
        assert "stored as version v3" in second.stdout and "(turn 2)" in second.stdout
        prompts = [json.dumps(r["messages"]) for r in fake.chat_requests]
    assert "SALE" in prompts[0] and "OCR" in prompts[0].upper()  # the planner saw the image's text
    assert REPLACE in prompts[1]  # … and, continuing the session, the earlier instruction
    store = Store(home)
    assert [t.instruction for t in store.turns(sid)] == [REPLACE, again]
    assert store.session(sid).head == store.versions(sid)[-1].id


def test_session_that_does_not_exist_is_a_message(sale_png: Path, tmp_path: Path) -> None:
    r = costa("edit", REPLACE, "-o", str(tmp_path / "x.png"), "--session", "nope", home=tmp_path / "home")
    assert r.returncode == 2 and "unknown session" in r.stderr and "Traceback" not in r.stderr


def test_bundle_rerun_commands_are_complete_and_shell_safe(sale_png: Path, tmp_path: Path) -> None:
    core = SessionCore(Services(Settings(calibration_table=fake_table(), home=tmp_path / "home")))
    sid = core.new_session(None).id
    core.upload(sid, None, sale_png)
    hostile = REPLACE + ' $(touch PWNED-1) "; touch PWNED-2; "'
    opts = TurnOptions.validate(core.settings, 1.0, 0.8, "eager")
    for _ in core.run(core.prepare(sid, None, hostile, opts)):
        pass
    for _ in core.run(core.prepare(sid, None, "recolor it to pink", TurnOptions(), Pointing([(100, 80), (220, 140)]))):
        pass
    mask = np.zeros((200, 480), bool)
    mask[40:120, 50:260] = True
    from costa.types import Mask

    brushed = core.prepare(
        sid, None, "recolor it to pink", TurnOptions(), Pointing(brush=Mask(mask, label="user brush"))
    )
    for _ in core.run(brushed):
        pass
    _, bundle = core.versions.export(sid, None)
    out = tmp_path / "bundle"
    with zipfile.ZipFile(bundle) as z:
        z.extractall(out)
        names = z.namelist()
        everything = b"".join(z.read(n) for n in names)
    core.close()
    assert sid.encode() not in everything  # the session id is its access key: never in a bundle
    readme = (out / "README.txt").read_text()
    commands = [line.split(": ", 1)[1] for line in readme.splitlines() if line.startswith("turn ")]
    assert len(commands) == 3
    assert "--eager" in commands[0] and "--point 100,80 --point 220,140" in commands[1]
    assert "--mask masks/turn-" in commands[2] and any(n.startswith("masks/") for n in names)
    for cmd in commands:
        r = subprocess.run(
            cmd, shell=True, cwd=out, capture_output=True, text=True, timeout=300,
            env={**os.environ, "PYTHONPATH": str(ROOT), "COSTA_HOME": str(tmp_path / "rerun")},
        )  # fmt: skip
        # 2 only as an honest refusal: the hostile text is far too long for the sign, so no replacement fits
        refused = r.returncode == 2 and "no tool path passed its checks" in r.stdout + r.stderr
        assert r.returncode in (0, 3) or refused, cmd + "\n" + r.stdout + r.stderr
        assert "usage:" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not list(out.glob("PWNED*")) and not list(ROOT.glob("PWNED*"))  # the user's text was never run


def test_scores_csv_has_no_session_id_and_readable_times(sale_png: Path, tmp_path: Path) -> None:
    core = SessionCore(Services(Settings(calibration_table=fake_table(), home=tmp_path / "home")))
    sid = core.new_session(None).id
    core.upload(sid, None, sale_png)
    view = [v for v, _ in core.run(core.prepare(sid, None, REPLACE, TurnOptions()))][-1]
    assert view is not None and view.turn_number == 1 and view.result_number == 2
    core.versions.score(sid, None, view.turn_id, "s1", 1.0, "ok", "ann")
    text = core.versions.scores_csv(sid, None).read_text()
    core.close()
    assert sid not in text
    created = text.splitlines()[1].split(",")[-1]
    assert created[:4].isdigit() and "T" in created and created.endswith("+00:00")  # ISO 8601, not a Unix time


def test_fast_slow_cli_runs_add_up_in_costa_home_without_a_session(tmp_path: Path) -> None:
    """Two `costa edit --mode fast-slow` runs without --session leave their tool runs, traces and the task count in
    COSTA_HOME (before, a throwaway store kept nothing); --no-record learns nothing and writes nothing there."""
    from costa.subroutines.observations import ObservationLog

    src = tmp_path / "grey.png"
    Image.fromarray(np.full((48, 64, 3), 90, np.uint8)).save(src)
    home = tmp_path / "home"
    args = ["edit", str(src), "Make the image brighter.", "-o", str(tmp_path / "out.png"), "--mode", "fast-slow"]
    for _ in range(2):
        r = costa(*args, home=home)
        assert r.returncode == 0, r.stdout + r.stderr
    log = ObservationLog(Store(home))
    assert log.counter("tasks") == 2 and len(log.traces()) == 2
    assert log.aggregates()[("global_adjust", "global_adjustment")][0] >= 2
    assert Store(home).sessions(None) == []  # the sessions themselves were throwaway ones
    r = costa(*args, "--no-record", home=home)
    assert r.returncode == 0, r.stdout + r.stderr
    assert log.counter("tasks") == 2 and len(log.traces()) == 2
    quiet = tmp_path / "quiet"
    assert costa(*args, "--no-record", home=quiet).returncode == 0 and not (quiet / "costa.db").exists()
