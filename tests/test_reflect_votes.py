"""Reflection's votes (issue 18 part 6): a dimension votes for a subtask kind only where its scores separated right
from wrong real results (AUC ≥ the table's bar, enough of each); elsewhere its score is shown and never used. The
table's parse names file, line and value; the shipped table is what `bench real --write` measured; a turn whose kind
has no voting dimension is not retried or rejected by reflection, while the FAKE all-voting table retries it."""

from __future__ import annotations

from pathlib import Path

import pytest

from costa.errors import TableError
from costa.events import Reflection, ReflectionKept, ReflectionRetry, TurnDone
from costa.reflect.protocol import ExpertJudgement
from costa.reflect.report import describe_event, panel_markdown
from costa.reflect.votes import VOTES_COLUMNS, format_votes, load_votes, parse_votes
from tests.fake_openai import FakeOpenAI, chat
from tests.fake_votes import write_fake_votes
from tests.test_reflect import _judge, _run, _vlm_table

HEAD = "# MIN_AUC=0.75 MIN_EACH=8\n" + ",".join(VOTES_COLUMNS) + "\n"


def test_a_dimension_votes_only_with_enough_of_each_and_the_auc() -> None:
    v = parse_votes(
        HEAD
        + "perception,aesthetics,object_removal,40,12,0.80,bench\n"
        + "perception,perceptual_quality,object_removal,40,12,0.74,bench\n"
        + "preservation,logical_consistency,object_removal,40,5,0.95,bench\n"
        + "instruction,semantic_alignment,object_removal,40,12,,bench\n"
    )
    assert v.vote("perception", "aesthetics", "object_removal").votes
    assert "AUC 0.74" in v.vote("perception", "perceptual_quality", "object_removal").reason
    assert "5 right, 35 wrong" in v.vote("preservation", "logical_consistency", "object_removal").reason
    assert not v.vote("instruction", "semantic_alignment", "object_removal").votes  # one class only: no AUC
    assert "never measured" in v.vote("perception", "aesthetics", "outpainting").reason  # never borrowed
    judged = [
        ExpertJudgement("perception", "offline", {"aesthetics": 2.0, "perceptual_quality": 10.0}),
        ExpertJudgement("preservation", "offline", {"logical_consistency": 10.0}),
    ]
    cal = v.calibrate(judged, "object_removal")
    assert cal.score == 2.0 and cal.raw == pytest.approx(22 / 3) and len(cal.silent) == 2
    assert v.calibrate(judged, "outpainting").score is None


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("perception,aesthetics,object_removal,4,5,0.8,bench", "right <= n"),
        ("perception,aesthetics,object_removal,x,5,0.8,bench", "whole numbers"),
        ("perception,aesthetics,object_removal,40,5,1.8,bench", "auc must be in"),
        ("perception,aesthetics,object_removal,40,5,0.8,guess", "source must be one of"),
        ("Perception,aesthetics,object_removal,40,5,0.8,bench", "snake_case"),
    ],
)
def test_a_bad_row_names_the_file_line_and_value(row: str, message: str) -> None:
    with pytest.raises(TableError, match=message) as e:
        parse_votes(HEAD + row + "\n", "votes.csv")
    assert "votes.csv line 3" in str(e.value)


def test_the_bars_must_be_stated() -> None:
    with pytest.raises(TableError, match="MIN_AUC"):
        parse_votes(",".join(VOTES_COLUMNS) + "\n", "votes.csv")
    with pytest.raises(TableError, match="MIN_AUC must be in"):
        parse_votes("# MIN_AUC=0.2 MIN_EACH=8\n" + ",".join(VOTES_COLUMNS) + "\n")


def test_the_shipped_table_is_real_evidence_and_round_trips() -> None:
    shipped = load_votes()
    assert shipped.min_auc >= 0.75 and shipped.rows
    assert {r.source for r in shipped.rows.values()} <= {"bench", "person", "bench+person"}  # never "fake"
    again = parse_votes(format_votes(shipped.min_auc, shipped.min_each, list(shipped.rows.values())))
    assert again.rows == shipped.rows
    # what the dev part measured: preservation ranks wrong removals above right ones; it has no vote there
    assert not shipped.vote("preservation", "logical_consistency", "object_removal").votes


def test_without_a_vote_reflection_neither_retries_nor_rejects(tmp_path: Path, monkeypatch) -> None:
    silent = tmp_path / "silent.csv"
    silent.write_text(HEAD)  # nothing measured: no dimension votes anywhere
    with FakeOpenAI([chat(_judge(3.0))]) as fake:  # a VLM expert that hates the result
        events = _run(fake, _vlm_table(tmp_path, 1), monkeypatch, votes=str(silent))
    refl = [e for e in events if isinstance(e, Reflection)]
    assert len(refl) == 1 and not refl[0].calibrated and refl[0].decision == "accept" and refl[0].score == 3.0
    assert refl[0].silent and all("never measured" in s for s in refl[0].silent)
    assert not [e for e in events if isinstance(e, ReflectionRetry)]
    kept = next(e for e in events if isinstance(e, ReflectionKept))
    assert kept.accepted and "advisory" in kept.reason
    assert "advisory" in describe_event(refl[0]) and "**advisory**" in panel_markdown(refl)
    assert isinstance(events[-1], TurnDone) and events[-1].ok


def test_with_votes_the_same_turn_is_retried(tmp_path: Path, monkeypatch) -> None:
    fake_votes = write_fake_votes(tmp_path / "fake.csv")
    with FakeOpenAI([chat(_judge(3.0)), chat(_judge(3.0)), chat(_judge(3.0))]) as fake:
        events = _run(fake, _vlm_table(tmp_path, 1), monkeypatch, votes=str(fake_votes))
    refl = [e for e in events if isinstance(e, Reflection)]
    assert refl and all(r.calibrated for r in refl) and refl[0].decision == "retry"
    kept = next(e for e in events if isinstance(e, ReflectionKept))
    assert not kept.accepted  # 3.0 < τ_sr: the best of the attempts, labelled as such
