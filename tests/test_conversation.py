"""Follow-ups in a conversation: what is on the image now, references to it, history commands in words, restores."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from costa.config import Settings
from costa.reflect.entities import derive_entities
from costa.reflect.memory import TurnRecord
from costa.reflect.references import resolve_references
from costa.services import Services
from costa.session import SessionCore
from costa.session.conversation import HistoryCommand, parse_command
from costa.store import Store
from costa.testing.calibration import fake_table
from tests.test_session_core import finish, new_session_with, run
from ui import render as R


def _mask(y0: int, y1: int, x0: int, x1: int, shape: tuple[int, int] = (40, 60)) -> np.ndarray:
    m = np.zeros(shape, bool)
    m[y0:y1, x0:x1] = True
    return m


ROSE = _mask(5, 20, 5, 20)
WORD = _mask(25, 35, 30, 55)


def _turns() -> list[TurnRecord]:
    return [
        TurnRecord(1, "make the pink rose yellow", "make the pink rose yellow",
                   (("object_recoloration", "pink rose", "yellow", "s1"),), (("s1", ROSE),)),
        TurnRecord(2, "replace 'SALE' with 'OPEN'", "replace 'SALE' with 'OPEN'",
                   (("text_replacement", "SALE", "OPEN", "s1"),), (("s1", WORD),)),
    ]  # fmt: skip


def test_entities_follow_the_edits() -> None:
    entities = derive_entities(_turns())
    assert [e.describe() for e in entities] == ["the yellow rose", "the word 'OPEN'"]
    rose, word = entities
    assert rose.region is not None and rose.region.sum() == ROSE.sum() and rose.changes[-1].before == "the pink rose"
    assert word.box() is not None and word.changes[-1].before == "the word 'SALE'"
    gone = [*_turns(), TurnRecord(3, "remove the rose", "remove the rose", (("object_removal", "yellow rose", None,
                                  "s1"),))]  # fmt: skip
    assert [e.describe() for e in derive_entities(gone)] == ["the word 'OPEN'"]  # a removed thing is gone
    added = [*_turns(), TurnRecord(3, "add a red hat", "add a red hat", (("object_addition", None, "red hat", "s1"),))]
    assert derive_entities(added)[-1].describe() == "the red hat"


def test_references_resolve_to_what_is_there_now() -> None:
    turns = _turns()
    it = resolve_references("now change it to 'SOON'", turns)
    assert it.text == "change the word 'OPEN' to 'SOON'" and it.reference == "it" and it.region is not None
    darker = resolve_references("now make it darker", turns[:1])
    assert darker.text == "make the yellow rose darker" and darker.region is not None
    assert darker.region.sum() == ROSE.sum()  # the last edited target, not the whole image
    assert resolve_references("use red instead", turns[:1]).text == "make the yellow rose red"
    assert resolve_references("use 'SOON' instead", turns).text == "replace the text 'OPEN' with 'SOON'"
    assert resolve_references("highlight the word I just wrote", turns).text == "highlight the word 'OPEN'"
    same = resolve_references("make the green square the same colour as the rose", turns)
    assert same.text == "make the green square yellow" and same.reference == "same colour as"
    named = resolve_references("make the green square the same colour as the blue circle", turns)
    assert named.text == "make the green square blue"
    unknown = resolve_references("make the square the same colour as the ball", turns)
    assert unknown.question and "ball" in unknown.question  # nothing says what colour the ball is: ask
    assert resolve_references("make it look like winter", turns[:1]).text == "make it look like winter"


def test_back_and_the_opposite_edit_restore_instead_of_editing_again() -> None:
    turns = _turns()
    back = resolve_references("change it back", turns)
    assert back.restore is not None and back.restore.before == "the word 'SALE'" and back.restore.turn == 2
    rose = resolve_references("put the rose back", turns)
    assert rose.restore is not None and rose.restore.before == "the pink rose" and rose.restore.turn == 1
    opposite = resolve_references("replace 'OPEN' with 'SALE'", turns)
    assert opposite.restore is not None and opposite.reference == "opposite"
    again = resolve_references("make the yellow rose pink again", turns[:1])
    assert again.restore is not None or again.text == "make the yellow rose pink again"
    not_back = resolve_references("replace 'OPEN' with 'SOON'", turns)
    assert not_back.restore is None


def test_ambiguity_asks_one_question_and_them_means_both() -> None:
    two = [TurnRecord(1, "recolour the mug to yellow and the plate to green", "…",
                      (("object_recoloration", "mug", "yellow", "s1"), ("object_recoloration", "plate", "green", "s2")),
                      (("s1", ROSE), ("s2", WORD)))]  # fmt: skip
    asked = resolve_references("make it darker", two)
    assert asked.question == "Which one do you mean: the yellow mug or the green plate?"
    assert resolve_references("make them red", two).text == "make the yellow mug and the green plate red"


def test_a_bit_more_and_less_repeat_the_last_adjustment() -> None:
    turns = [TurnRecord(1, "make the sky darker", "make the sky darker",
                        (("global_adjustment", "sky", "darker", "s1"),), (("s1", ROSE),))]  # fmt: skip
    assert resolve_references("a bit more", turns).text == "make the sky a little darker"
    assert resolve_references("a little less", turns).text == "make the sky a little brighter"


def test_history_commands_in_words() -> None:
    assert parse_command("undo") == HistoryCommand("undo")
    assert parse_command("please undo that") == HistoryCommand("undo")
    assert parse_command("go back two steps") == HistoryCommand("undo", 2)
    assert parse_command("undo the last 3 changes") == HistoryCommand("undo", 3)
    assert parse_command("redo") == HistoryCommand("redo")
    assert parse_command("start over") == HistoryCommand("start_over")
    assert parse_command("go back to the original") == HistoryCommand("start_over")
    assert parse_command("branch from version 3") == HistoryCommand("branch", 1, 3)
    for edit in ("change it back", "make it red", "remove the background", "go back to how it was"):
        assert parse_command(edit) is None, edit


@pytest.fixture()
def discs(tmp_path: Path) -> tuple[SessionCore, str, np.ndarray]:
    img = np.full((120, 160, 3), 120, np.uint8)
    yy, xx = np.mgrid[:120, :160]
    img[(yy - 60) ** 2 + (xx - 50) ** 2 < 25**2] = (200, 30, 30)
    img[(yy - 60) ** 2 + (xx - 115) ** 2 < 20**2] = (30, 160, 40)
    Image.fromarray(img).save(tmp_path / "discs.png")
    ws = SessionCore(
        Services(Settings(calibration_table=fake_table(), home=tmp_path, reflect=False)), Store(tmp_path / "store")
    )
    sid = new_session_with(ws, tmp_path / "discs.png")
    yield ws, sid, img
    ws.close()


def test_a_follow_up_session_through_the_core(discs: tuple[SessionCore, str, np.ndarray]) -> None:
    ws, sid, original = discs
    red = (np.mgrid[:120, :160][0] - 60) ** 2 + (np.mgrid[:120, :160][1] - 50) ** 2 < 22**2
    assert finish(run(ws, sid, None, "make the red disc blue")).status == "done"
    _, blue = ws.head(sid, None)
    darker = finish(run(ws, sid, None, "now make it darker"))
    assert darker.status == "done" and any("the blue disc" in n for n in darker.notes), darker.notes
    # the chat shows how 'it' was read beside the instruction (not folded inside the plan), live and after a reload
    live_user = R.chat_messages(darker)[0]["content"]
    assert "'it' = the blue disc" in live_user, live_user
    assert R.chat_messages(ws.versions.turn_views(sid, None)[-1])[0]["content"] == live_user
    _, dark = ws.head(sid, None)
    assert dark[red].mean() < blue[red].mean() - 5  # the disc got darker …
    assert np.array_equal(dark[:, 100:], original[:, 100:])  # … and nothing else did
    back = finish(run(ws, sid, None, "change it back"))
    assert back.status == "done" and back.result_version is not None
    _, restored = ws.head(sid, None)
    assert np.array_equal(restored, blue)  # exactly as before the darkening: no drift


def test_a_second_sessions_follow_ups_name_its_own_turns(
    discs: tuple[SessionCore, str, np.ndarray], tmp_path: Path
) -> None:
    """Turn ids run across sessions: in a session opened after another's three turns, "now make it darker" was read
    as "'it' = the blue disc (turn 3)" in its second turn (seen in the app: "(turn 3)" beside a ledger's "turn 2").
    It names the session's own number now, and "change it back" still finds that turn by its id."""
    ws, first, _ = discs
    for text in ("make the red disc blue", "make the green disc yellow", "undo"):
        finish(run(ws, first, None, text))
    sid = new_session_with(ws, tmp_path / "discs.png")
    assert finish(run(ws, sid, None, "make the red disc blue")).status == "done"
    _, blue = ws.head(sid, None)
    darker = finish(run(ws, sid, None, "now make it darker"))
    assert darker.turn_number == 2 and any("'it' = the blue disc (turn 1)" in n for n in darker.notes), darker.notes
    back = finish(run(ws, sid, None, "change it back"))
    assert back.status == "done" and any("before turn 2" in n for n in back.notes), back.notes
    assert np.array_equal(ws.head(sid, None)[1], blue)


def test_words_as_undo_do_what_the_buttons_do(discs: tuple[SessionCore, str, np.ndarray]) -> None:
    ws, sid, original = discs
    finish(run(ws, sid, None, "make the red disc blue"))
    finish(run(ws, sid, None, "make the green disc yellow"))
    said = finish(run(ws, sid, None, "go back two steps"))
    assert said.status == "done" and "Undid 2 steps" in said.notes[0]
    assert np.array_equal(ws.head(sid, None)[1], original)
    by_words = ws.versions.summary(sid, None)
    finish(run(ws, sid, None, "redo"))
    ws.versions.undo(sid, None)  # the button
    assert ws.versions.summary(sid, None)["head"] == by_words["head"]
    finish(run(ws, sid, None, "branch from version 2"))
    assert ws.versions.summary(sid, None)["head"] == ws.versions.version_rows(sid)[1].version.id
    assert finish(run(ws, sid, None, "start over")).status == "done"
    assert np.array_equal(ws.head(sid, None)[1], original)
    nothing = finish(run(ws, sid, None, "undo"))
    assert nothing.status == "failed" and "nothing to undo" in nothing.errors[0]


def test_both_of_them_and_all_of_those_mean_them() -> None:
    """A quantifier before the plural pronoun is part of the reference: "darken both of them" used to become
    "darken both of the yellow mug and the green plate" (the planner's target: "of mug and plate")."""
    two = [TurnRecord(1, "recolour the mug to yellow and the plate to green", "…",
                      (("object_recoloration", "mug", "yellow", "s1"), ("object_recoloration", "plate", "green", "s2")),
                      (("s1", ROSE), ("s2", WORD)))]  # fmt: skip
    both = "the yellow mug and the green plate"
    assert resolve_references("darken both of them", two).text == f"darken {both}"
    assert resolve_references("now make all of them lighter", two).text == f"make {both} lighter"
    assert resolve_references("make each of those red", two).text == f"make {both} red"
    assert resolve_references("make both darker", two).text == f"make {both} darker"
    assert resolve_references("make both discs darker", two).text == "make both discs darker"  # a determiner
    assert resolve_references("darken both of them", two).reference == "them"


def test_a_bit_more_after_two_things_repeats_on_both() -> None:
    """ "make the mug and the plate darker", then "a bit more": both again, each in its own region (it darkened the
    plate alone); after two different edits it stays the last thing's."""
    same = [TurnRecord(1, "make the mug and the plate darker", "…",
                       (("global_adjustment", "mug", "darker", "s1"), ("global_adjustment", "plate", "darker", "s2")),
                       (("s1", ROSE), ("s2", WORD)))]  # fmt: skip
    more = resolve_references("a bit more", same)
    assert more.text == "make the mug and the plate a little darker" and more.reference == "a bit more"
    assert [name for name, _ in more.parts] == ["mug", "plate"]
    assert resolve_references("even darker", same).text == "make the mug and the plate darker"
    assert resolve_references("a bit less", same).text == "make the mug and the plate a little brighter"
    mixed = [TurnRecord(1, "make the mug red and the plate darker", "…",
                        (("object_recoloration", "mug", "red", "s1"), ("global_adjustment", "plate", "darker", "s2")),
                        (("s1", ROSE), ("s2", WORD)))]  # fmt: skip
    assert resolve_references("a bit more", mixed).text == "make the plate a little darker"


def test_the_previous_one_is_the_thing_edited_before() -> None:
    """Two things edited: 'the previous one' is the first. One remembered (a later edit failed and left nothing to
    remember): it is that one, not a question; 'the other one' still asks, since there is no other."""
    mug = (("object_recoloration", "mug", "yellow", "s1"),)
    plate = (("object_recoloration", "plate", "green", "s1"),)
    two = [TurnRecord(1, "make the mug yellow", "make the mug yellow", mug),
           TurnRecord(2, "make the plate green", "make the plate green", plate)]  # fmt: skip
    assert resolve_references("make the previous one red", two).text == "make the yellow mug red"
    one = two[:1]
    assert resolve_references("make the previous one red", one).text == "make the yellow mug red"
    other = resolve_references("make the other one red", one)
    assert other.question and "Which other mug" in other.question


def test_more_ways_to_say_back_and_a_correction_lead() -> None:
    """'put it back how it was', 'change the word back' (the word costa wrote last), 'as it was before'; and a
    correction's lead ('no, use … instead') is not part of the new value. 'no darker' is not a correction."""
    turns = _turns()
    for said, before in (("put it back how it was", "the word 'SALE'"), ("change the word back", "the word 'SALE'"),
                         ("put the text back the way it was", "the word 'SALE'"),
                         ("change the rose back as it was before", "the pink rose")):  # fmt: skip
        r = resolve_references(said, turns)
        assert r.restore is not None and r.restore.before == before, (said, r)
    assert resolve_references("no, use 'FREE' instead", turns).text == "replace the text 'OPEN' with 'FREE'"
    assert resolve_references("no darker", turns).restore is None


def test_instead_after_an_adjustment_names_the_new_adjustment() -> None:
    """'no, make it brighter instead' after 'make the flag darker' was 'make the flag brighter instead', which planned
    nothing ('nothing editable was recognised')."""
    flag = _mask(5, 30, 0, 12)
    turns = [TurnRecord(1, "make the flag darker", "make the flag darker",
                        (("global_adjustment", "flag", "darker", "s1"),), (("s1", flag),))]  # fmt: skip
    assert resolve_references("no, make it brighter instead", turns).text == "make the flag brighter"
    whole = [
        TurnRecord(1, "make the photo darker", "make the photo darker", (("global_adjustment", None, "darker", "s1"),))
    ]
    assert resolve_references("use a bit warmer instead", whole).text == "make the image a bit warmer"


def test_put_it_back_with_the_box_of_the_edit_still_set_restores_and_elsewhere_edits() -> None:
    from costa.session.conversation import points_at
    from costa.turn.records import UserRegion
    from costa.types import Box, Point

    changed = _mask(10, 30, 10, 30)
    assert points_at(UserRegion(boxes=(Box(8, 8, 25, 25),)), changed)
    assert points_at(UserRegion(points=(Point(15, 15),)), changed)
    assert not points_at(UserRegion(boxes=(Box(40, 0, 10, 10),)), changed)
    assert not points_at(UserRegion(points=(Point(2, 2),)), changed)


def test_a_bare_noun_is_the_remembered_thing() -> None:
    """'make the flag green' after 'make the flag blue' edits the remembered flag's region (the box is no longer in the
    page's field once the proposal was accepted)."""
    one = [TurnRecord(1, "make the flag blue", "make the flag blue", (("object_recoloration", "flag", "blue", "s1"),),
                      (("s1", _mask(0, 20, 0, 10)),))]  # fmt: skip
    r = resolve_references("make the flag green", one)
    assert r.region is not None and r.region[5, 5] and not r.region[30, 30] and r.reference == "named"


def test_darkening_the_word_costa_wrote_keeps_it_that_word() -> None:
    """'make it darker' after 'SALE' → 'OPEN' is planned on "word 'OPEN'": that is the text entity, darkened, not a
    new object called 'open' (which 'change the word back' then reported as "the open is the open again")."""
    darker = (("global_adjustment", "word 'OPEN'", "darker", "s1"),)
    turns = [*_turns(), TurnRecord(3, "make it darker", "make the word 'OPEN' darker", darker, (("s1", WORD),))]
    texts = [e for e in derive_entities(turns) if e.kind == "text"]
    assert [e.noun for e in texts] == ["OPEN"] and [c.kind for c in texts[0].changes][-1] == "global_adjustment"
    assert not [e for e in derive_entities(turns) if e.kind == "object" and e.noun.lower() == "open"]
