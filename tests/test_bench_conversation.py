"""bench conversation: the suites' shape, its checks failing on wrong results, and one real session end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from bench.conversation import PARTS, SUITES_DIR, Scene, check_turn, format_part, make_scene, run_part


def test_the_suites_have_the_sessions_the_issue_asks_for() -> None:
    sessions = [s for _, f in PARTS for s in yaml.safe_load((SUITES_DIR / f).read_text())["sessions"]]
    assert len(sessions) >= 40
    assert all(3 <= len(s["turns"]) <= 6 for s in sessions)
    assert sum(len(s["turns"]) - 1 for s in sessions) >= 150
    refs = {t.get("ref") for s in sessions for t in s["turns"][1:]}
    assert {"it", "the text", "instead", "back", "opposite", "same colour as", "the other one", "the previous one",
            "a bit more", "a bit less", "undo", "redo", "start over", "branch"} <= refs  # fmt: skip
    for s in sessions:
        for t in s["turns"]:
            assert "on" not in t.get("check", {}) and True not in t.get("check", {}), s["id"]  # YAML reads on as true


def test_checks_fail_on_wrong_results() -> None:
    scene = make_scene({"photo": "coffee", "box": [64, 8, 112, 88]})
    before = scene.image
    same = check_turn({"colour": "blue"}, scene, [before], before.copy(), False)
    assert "ΔE2000 to blue" in same  # nothing recoloured: not passed
    spill = before.copy()
    spill[150:, 200:] = 0  # a change outside the object
    assert "outside the edit" in check_turn({"darker": True}, scene, [before], spill, False)
    assert (
        check_turn({"asked": True}, scene, [before], before.copy(), False) == "no question asked, or the image changed"
    )
    text = Scene(before, None, None)
    assert "no region" in check_turn({"restored": 0}, text, [before], before.copy(), False)
    assert check_turn({"same": 0}, scene, [before, before], before.copy(), False) == ""


def test_one_session_end_to_end(tmp_path: Path) -> None:
    suite = {
        "setups": {"cup": {"photo": "coffee", "box": [64, 8, 112, 88]}},
        "sessions": [
            {
                "id": "t1",
                "setup": "cup",
                "turns": [
                    {"say": "make the cup blue", "check": {"colour": "blue"}},
                    {
                        "say": "now make it darker",
                        "ref": "it",
                        "expect": [["global_adjustment", "blue cup", "darker"]],
                        "check": {"darker": True},
                    },
                    {"say": "change it back", "ref": "back", "expect": "restore", "check": {"restored": 1}},
                    {"say": "undo", "ref": "undo", "expect": "undo", "check": {"same": 2}},
                ],
            }
        ],
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite))
    r = run_part("t", path, tmp_path / "home")
    text = "\n".join(format_part(r))
    assert r.follow_ups == 3 and sum(r.total.values()) == 3, text
    assert r.passed == 1 and sum(r.resolved.values()) == 3, text
    assert np.isfinite(r.seconds)


def test_mark_checks_hold_on_every_mark() -> None:
    """`region: marks`: a check passes only when every painted mark passed it (one of two darkened is a miss)."""
    marks = [{"shape": "disc", "colour": "red", "box": [20, 60, 40, 40]}, {"shape": "square", "colour": "blue",
             "box": [180, 60, 36, 36]}]  # fmt: skip
    scene = make_scene({"photo": "rocket", "marks": marks})
    assert scene.marks == ((20, 60, 40, 40), (180, 60, 36, 36))
    before = scene.image
    assert before[80, 40, 0] > 180 > before[80, 40, 2]  # the red disc is painted at its box's centre
    one = before.copy()
    one[60:100, 20:60] //= 2  # only the first mark darker
    miss = check_turn({"darker": True, "region": "marks"}, scene, [before], one, False)
    assert "mark 2: L* moved" in miss and "mark 1" not in miss
    both = one.copy()
    both[60:96, 180:216] //= 2
    assert check_turn({"darker": True, "region": "marks"}, scene, [before], both, False) == ""
    colours = {"colour": ["red", "yellow"], "region": "marks"}
    assert "mark 2: ΔE2000 to yellow" in check_turn(colours, scene, [before], both, False)
