"""The offline rule planner and plan validation: exact plans for the instructions users type."""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any

import pytest

from costa.colours import parse_colour
from costa.errors import InputError, PlanningError, TableError
from costa.planner import (
    MAX_INSTRUCTION_CHARS,
    NOTHING_RECOGNISED,
    load_subtask_kinds,
    plan_with_rules,
    split_targets,
    validate_plan,
    validate_subtasks,
)
from costa.planner.clauses import mask_quotes, split_clauses
from costa.planner.rules import NOT_ENGLISH
from costa.types import Plan, Subtask
from tests.conftest import SHARED_BENCHMARKS

Row = tuple[str, str | None, str | None, dict[str, Any], tuple[str, ...]]


def rows(instruction: str, **kw: Any) -> list[Row]:
    """(kind, target, result, params, parents) per subtask; ids are checked to be s1, s2, … in order."""
    plan = plan_with_rules(instruction, **kw)
    assert [s.id for s in plan.subtasks] == [f"s{k}" for k in range(1, len(plan.subtasks) + 1)]
    assert plan.form == "chain" and plan.planner == "rules"
    return [(s.kind, s.target, s.result, s.params, s.parents) for s in plan.subtasks]


def rgb(colour: str) -> dict[str, list[int]]:
    value = parse_colour(colour)
    assert value is not None, colour
    return {"rgb": list(value)}


# ---------------------------------------------------------------------------------------------------------- text

#: Params of a text target the user spelled out (quoted, or after "the word"): matched letter by letter.
LIT: dict[str, Any] = {"literal": True}

TEXT_CASES: list[tuple[str, list[Row]]] = [
    ("replace the text 'SALE' with 'OPEN'", [("text_replacement", "SALE", "OPEN", LIT, ())]),
    ("change the word SALE to OPEN", [("text_replacement", "SALE", "OPEN", LIT, ())]),
    ('change "Hello" to "Bye"', [("text_replacement", "Hello", "Bye", LIT, ())]),
    ("replace ‘SALE’ with ‘OPEN’", [("text_replacement", "SALE", "OPEN", LIT, ())]),
    ("change “Hello” to “Bye”", [("text_replacement", "Hello", "Bye", LIT, ())]),
    (
        "replace 'SALE' with 'OPEN' on the sign",
        [("text_replacement", "SALE", "OPEN", {"region": "sign", **LIT}, ())],
    ),
    ("change the text on the sign to 'OPEN'", [("text_replacement", None, "OPEN", {"region": "sign"}, ())]),
    ("substitute 'B' for 'A'", [("text_replacement", "A", "B", LIT, ())]),
    ("replace 'don't' with 'do'", [("text_replacement", "don't", "do", LIT, ())]),
    ("remove the text", [("text_removal", None, None, {}, ())]),
    ("erase all text", [("text_removal", None, None, {}, ())]),
    ("remove the text 'FREE'", [("text_removal", "FREE", None, LIT, ())]),
    ("remove the word FREE from the sign", [("text_removal", "FREE", None, {"region": "sign", **LIT}, ())]),
    ("redact the phone number", [("text_redaction", "phone number", None, {}, ())]),
    ("black out the email", [("text_redaction", "email", None, {}, ())]),
    ("hide the address", [("text_redaction", "address", None, {}, ())]),
    (
        "redact 'John Smith' and 'Jane'",
        [("text_redaction", "John Smith", None, LIT, ()), ("text_redaction", "Jane", None, LIT, ("s1",))],
    ),
    ("black out 'email'", [("text_redaction", "email", None, LIT, ())]),
    ("highlight the word 'urgent'", [("keyword_highlighting", "urgent", None, LIT, ())]),
    ("highlight every 'sale'", [("keyword_highlighting", "sale", None, LIT, ())]),
    ("highlight every sale", [("keyword_highlighting", "sale", None, {}, ())]),
    ("highlight all occurrences of deadline", [("keyword_highlighting", "deadline", None, LIT, ())]),
    ("add the text 'Hello' at the top", [("text_addition", None, "Hello", {"position": "top"}, ())]),
    ("add the text Hello at the top", [("text_addition", None, "Hello", {"position": "top"}, ())]),
    (
        "add a caption saying 'Happy birthday' in the bottom right corner",
        [("text_addition", None, "Happy birthday", {"position": "bottom right"}, ())],
    ),
    ("write 'SALE' on the window", [("text_addition", None, "SALE", {"region": "window"}, ())]),
    ("what does the sign say", [("text_extraction", "sign", None, {}, ())]),
    ("what is written on the poster?", [("text_extraction", "poster", None, {}, ())]),
    ("read the text", [("text_extraction", None, None, {}, ())]),
    ("extract the text", [("text_extraction", None, None, {}, ())]),
    ("detect the text", [("text_detection", None, None, {}, ())]),
    ("find the word 'sale'", [("text_detection", "sale", None, LIT, ())]),
    (
        "what is the price on the sign?",
        [("question_answering_text", "what is the price on the sign?", None, {}, ())],
    ),
    ("Is the text positive or negative?", [("sentiment_analysis", None, None, {}, ())]),
    (
        "does the caption 'a dog on a beach' match the image?",
        [("caption_consistency_check", "a dog on a beach", None, {}, ())],
    ),
]


@pytest.mark.parametrize(("instruction", "expected"), TEXT_CASES, ids=[c[0] for c in TEXT_CASES])
def test_text_instructions(instruction: str, expected: list[Row]) -> None:
    assert rows(instruction) == expected


def test_text_edits_chain_and_reads_follow_them() -> None:
    assert rows("replace 'A' with 'B' and remove 'C', then add 'D' at the bottom. What does it say?") == [
        ("text_replacement", "A", "B", LIT, ()),
        ("text_removal", "C", None, LIT, ("s1",)),
        ("text_addition", None, "D", {"position": "bottom"}, ("s2",)),
        ("text_extraction", None, None, {}, ("s3",)),
    ]
    # A read written first still runs after the edits, so it sees the new text.
    assert rows("read the text, then replace 'A' with 'B'") == [
        ("text_replacement", "A", "B", LIT, ()),
        ("text_extraction", None, None, {}, ("s1",)),
    ]


def test_quoted_text_is_data() -> None:
    assert rows("replace the text 'remove the cat' with 'hi'") == [
        ("text_replacement", "remove the cat", "hi", LIT, ())
    ]
    assert rows('change "make the wall red and blue. Then upscale it" to "ok"') == [
        ("text_replacement", "make the wall red and blue. Then upscale it", "ok", LIT, ())
    ]
    # An apostrophe is not a quote; a quote that describes an object stays part of the object.
    assert rows("remove the man's hat") == [("object_removal", "man's hat", None, {}, ())]
    assert rows("Add a '31 December' calendar on the wooden table") == [
        ("object_addition", "wooden table", "'31 December' calendar", {"relation": "on"}, ())
    ]


# ------------------------------------------------------------------------------------------------------- objects

OBJECT_CASES: list[tuple[str, list[Row]]] = [
    ("recolor the car to pink", [("object_recoloration", "car", "pink", rgb("pink"), ())]),
    ("make the wall yellow", [("object_recoloration", "wall", "yellow", rgb("yellow"), ())]),
    ("paint the bench light blue", [("object_recoloration", "bench", "light blue", rgb("light blue"), ())]),
    ("change the colour of the shirt to red", [("object_recoloration", "shirt", "red", rgb("red"), ())]),
    ("Change char1's hat color to green", [("object_recoloration", "char1's hat", "green", rgb("green"), ())]),
    ("turn the car red", [("object_recoloration", "car", "red", rgb("red"), ())]),
    ("change the wall to green", [("object_recoloration", "wall", "green", rgb("green"), ())]),
    ("recolor the car to #ff00aa", [("object_recoloration", "car", "#ff00aa", {"rgb": [255, 0, 170]}, ())]),
    ("recolor the car to a vivid red", [("object_recoloration", "car", "vivid red", rgb("red"), ())]),
    ("remove the cat", [("object_removal", "cat", None, {}, ())]),
    ("erase the person", [("object_removal", "person", None, {}, ())]),
    ("delete the bottle", [("object_removal", "bottle", None, {}, ())]),
    (
        "Remove the camera from the wooden surface",
        [("object_removal", "camera", None, {"region": "wooden surface"}, ())],
    ),
    ("replace the truck with a car", [("object_replacement", "truck", "car", {}, ())]),
    ("turn the cat into a dog", [("object_replacement", "cat", "dog", {}, ())]),
    ("substitute a car for the truck", [("object_replacement", "truck", "car", {}, ())]),
    ("add a hat to the dog", [("object_addition", "dog", "hat", {"relation": "to"}, ())]),
    ("give the dog a hat", [("object_addition", "dog", "hat", {"relation": "on"}, ())]),
    ("Add a red sedan in the center", [("object_addition", None, "red sedan", {"position": "center"}, ())]),
    ("Add a person in a blue outfit to the scene", [("object_addition", None, "person in a blue outfit", {}, ())]),
    ("detect the bench", [("object_detection", "bench", None, {}, ())]),
    ("how many people are there?", [("object_detection", "people", None, {"count": True}, ())]),
    ("segment the dog", [("object_segmentation", "dog", None, {}, ())]),
    ("create a mask of the dog", [("object_segmentation", "dog", None, {}, ())]),
    ("remove the background", [("background_removal", None, None, {}, ())]),
    ("cut out the dog", [("object_segmentation", "dog", None, {}, ())]),
    ("make it brighter", [("global_adjustment", None, "brighter", {}, ())]),
    ("increase contrast", [("global_adjustment", None, "more contrast", {}, ())]),
    ("Increase brightness to enhance visibility.", [("global_adjustment", None, "brighter", {}, ())]),
    ("make the sky darker", [("global_adjustment", "sky", "darker", {}, ())]),
    ("make it black and white", [("global_adjustment", None, "grayscale", {}, ())]),
    ("upscale the image 2x", [("image_upscaling", None, "2", {}, ())]),
    ("upscale by 4", [("image_upscaling", None, "4", {}, ())]),
    ("increase the resolution", [("image_upscaling", None, "2", {}, ())]),
    ("expand the image", [("outpainting", None, None, {}, ())]),
    ("outpaint", [("outpainting", None, None, {}, ())]),
    ("extend the image to the left", [("outpainting", None, None, {"direction": "left"}, ())]),
    ("deblur", [("image_deblurring", None, None, {}, ())]),
    ("deblur the image", [("image_deblurring", None, None, {}, ())]),
    ("Remove blur from the ribbons.", [("image_deblurring", "ribbons", None, {}, ())]),
    ("caption the image", [("image_captioning", None, None, {}, ())]),
    ("describe this picture", [("image_captioning", None, None, {}, ())]),
    ("estimate depth", [("depth_estimation", None, None, {}, ())]),
    ("generate a depth map", [("depth_estimation", None, None, {}, ())]),
    ("what landmark is this", [("landmark_detection", None, None, {}, ())]),
    ("identify the landmark", [("landmark_detection", None, None, {}, ())]),
    ("what is the sentiment", [("sentiment_analysis", None, None, {}, ())]),
    ("change the scenery to winter", [("changing_scenery", None, "winter", {}, ())]),
    ("make it night", [("changing_scenery", None, "night", {}, ())]),
    ("replace the background with a beach", [("changing_scenery", None, "beach", {}, ())]),
]


@pytest.mark.parametrize(("instruction", "expected"), OBJECT_CASES, ids=[c[0] for c in OBJECT_CASES])
def test_object_and_image_instructions(instruction: str, expected: list[Row]) -> None:
    assert rows(instruction) == expected


def test_blur_faces_needs_privacy_blur_in_the_tables() -> None:
    assert rows("blur the faces") == [("privacy_blur", "faces", None, {}, ())]
    plan = plan_with_rules("blur the faces", kinds=load_subtask_kinds() - {"privacy_blur"})
    assert plan.subtasks == ()
    assert [u.text for u in plan.unsupported] == ["blur the faces"]
    assert "privacy_blur" in plan.unsupported[0].reason


BACKGROUND_BLUR_CASES = [
    ("blur the background", None),
    ("make the background blurry", None),
    ("put the background out of focus", None),
    ("portrait mode", None),
    ("add bokeh", None),
    ("give it a shallow depth of field", None),
    ("blur the background behind the person", "person"),
    ("blur everything except the dog", "dog"),
    ("blur the background but keep the woman sharp", "woman"),
    ("keep the cat sharp and blur the rest", "cat"),  # two clauses, one blur: the first names the subject
    ("keep the woman in focus and blur the background", "woman"),
]


@pytest.mark.parametrize(("instruction", "subject"), BACKGROUND_BLUR_CASES, ids=[c[0] for c in BACKGROUND_BLUR_CASES])
def test_background_blur_keeps_the_named_subject_sharp(instruction: str, subject: str | None) -> None:
    assert rows(instruction) == [("background_blur", subject, None, {}, ())]


def test_blurring_faces_or_plates_stays_a_privacy_blur() -> None:
    assert [r[0] for r in rows("blur the faces")] == ["privacy_blur"]
    assert [r[0] for r in rows("blur out the license plate")] == ["privacy_blur"]
    assert [r[0] for r in rows("deblur the background")] == ["image_deblurring"]
    plan = plan_with_rules("blur the background", kinds=load_subtask_kinds() - {"background_blur"})
    assert plan.subtasks == () and "background_blur" in plan.unsupported[0].reason


# ------------------------------------------------------------------------------------------------- multi-clause


def test_paper_style_multi_clause_instruction() -> None:
    assert rows(
        "Detect the bench while recoloring it to pink. Also, remove the cat and recolor the wall to yellow."
    ) == [
        ("object_detection", "bench", None, {}, ()),
        ("object_recoloration", "bench", "pink", rgb("pink"), ()),
        ("object_removal", "cat", None, {}, ()),
        ("object_recoloration", "wall", "yellow", rgb("yellow"), ()),
    ]


def test_recolour_of_a_replacement_depends_on_it() -> None:
    assert rows("Replace the truck with a car and make it red") == [
        ("object_replacement", "truck", "car", {}, ()),
        ("object_recoloration", "car", "red", rgb("red"), ("s1",)),
    ]
    assert rows("Replace the truck with a car. Then recolor it to pink and detect it.") == [
        ("object_replacement", "truck", "car", {}, ()),
        ("object_recoloration", "car", "pink", rgb("pink"), ("s1",)),
        ("object_detection", "car", None, {}, ("s2",)),
    ]
    assert rows("add a hat to the dog and make it red") == [
        ("object_addition", "dog", "hat", {"relation": "to"}, ()),
        ("object_recoloration", "hat", "red", rgb("red"), ("s1",)),
    ]


def test_costa_benchmark_prompts() -> None:
    assert rows(
        "Detect the tower in the image, deblur the image and upscale it, and also recolor the tower to gold."
    ) == [
        ("object_detection", "tower", None, {}, ()),
        ("image_deblurring", None, None, {}, ()),
        ("image_upscaling", None, "2", {}, ()),
        ("object_recoloration", "tower", "gold", rgb("gold"), ()),
    ]
    # Analysis before generation (IMAGAgent's ordering): the dog and the person are found on the photo's own pixels,
    # then the canvas is extended, then the edits. The reference Chain.json extends first; HOG then "detected a
    # person" in the invented margin (issue 18).
    assert rows("Segment the dog, detect the person, recolor the leaves to red, and expand the image") == [
        ("object_segmentation", "dog", None, {}, ()),
        ("object_detection", "person", None, {}, ()),
        ("outpainting", None, None, {}, ()),
        ("object_recoloration", "leaves", "red", rgb("red"), ()),
    ]


def test_one_target_per_subtask_and_pronouns_for_several() -> None:
    assert rows("recolor the car and the bus to red") == [
        ("object_recoloration", "car", "red", rgb("red"), ()),
        ("object_recoloration", "bus", "red", rgb("red"), ()),
    ]
    assert rows("detect the cat and the dog, then recolor them pink") == [
        ("object_detection", "cat", None, {}, ()),
        ("object_detection", "dog", None, {}, ()),
        ("object_recoloration", "cat", "pink", rgb("pink"), ()),
        ("object_recoloration", "dog", "pink", rgb("pink"), ()),
    ]
    # A modifier's "and" stays inside the target.
    assert rows("remove the man wearing a hat and a scarf") == [
        ("object_removal", "man wearing a hat and a scarf", None, {}, ())
    ]


def test_pronoun_without_object_is_reported() -> None:
    plan = plan_with_rules("remove the cat and make it red")
    assert [(s.kind, s.target) for s in plan.subtasks] == [("object_removal", "cat")]
    assert [u.text for u in plan.unsupported] == ["make it red"]


def test_duplicates_merge_and_politeness_is_ignored() -> None:
    assert rows("Please expand the image and remove the cat and remove the cat, thanks!") == [
        ("outpainting", None, None, {}, ()),
        ("object_removal", "cat", None, {}, ()),
    ]


def test_clause_splitting_keeps_descriptions_whole() -> None:
    masked = mask_quotes(
        "Add storefronts with red and orange awnings, add a fork next to the plate and paint the wall red"
    )
    assert [c.text for c in split_clauses(masked.text)] == [
        "Add storefronts with red and orange awnings",
        "add a fork next to the plate",
        "paint the wall red",
    ]


# ------------------------------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize("instruction", ["", "   ", "\n\t"])
def test_empty_instruction(instruction: str) -> None:
    with pytest.raises(InputError, match="empty instruction"):
        plan_with_rules(instruction)


def test_very_long_instruction_is_refused_quickly() -> None:
    start = time.perf_counter()
    with pytest.raises(InputError, match=f"at most {MAX_INSTRUCTION_CHARS}"):
        plan_with_rules("remove the cat " * 1400)  # 21,000 characters
    assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize(
    "instruction",
    [
        "remove the cat and " * 100,
        "'" * (MAX_INSTRUCTION_CHARS - 1),
        "a " * 990,
        "make the wall " + "red and " * 240 + "blue",
        "replace " + "the big " * 240 + "with a car",
    ],
    ids=["repeated-clauses", "quotes", "articles", "colours", "long-target"],
)
def test_instruction_at_the_limit_is_fast(instruction: str) -> None:
    start = time.perf_counter()
    with contextlib.suppress(PlanningError):
        plan_with_rules(instruction[:MAX_INSTRUCTION_CHARS])
    assert time.perf_counter() - start < 1.0


def test_nothing_editable() -> None:
    plan = plan_with_rules("hello there")
    assert plan.subtasks == ()
    assert len(plan.unsupported) == 1 and plan.unsupported[0].reason.startswith(NOTHING_RECOGNISED)
    plan = plan_with_rules("Please.")
    assert plan.subtasks == () and plan.unsupported[0].reason.startswith(NOTHING_RECOGNISED)


@pytest.mark.parametrize(
    ("instruction", "expected"),
    [
        ("let the asparagus be replaced with sausages", [("object_replacement", "asparagus", "sausages", {}, ())]),
        ("the cat should be removed", [("object_removal", "cat", None, {}, ())]),
        ("let the man wear a suit", [("object_addition", "man", "suit", {"relation": "on"}, ())]),
    ],
)
def test_passive_and_let_phrasings(instruction: str, expected: list[Row]) -> None:
    assert rows(instruction) == expected


def test_unsupported_parts_are_named_beside_the_plan() -> None:
    plan = plan_with_rules("remove the cat, then denoise the photo")
    assert [(s.kind, s.target) for s in plan.subtasks] == [("object_removal", "cat")]
    assert [(u.text, u.reason) for u in plan.unsupported] == [("denoise the photo", "denoising is not a subtask kind")]


@pytest.mark.parametrize(
    ("instruction", "message"),
    [
        ("make the wall red and blue", "the wall cannot be both red and blue: which colour"),
        ("recolor the wall to yellow, then make it blue", "the wall cannot be both yellow and blue: which colour"),
        ("make it brighter and darker", "cannot be both brighter and darker"),
    ],
)
def test_contradictions_ask_which(instruction: str, message: str) -> None:
    with pytest.raises(PlanningError, match=message):
        plan_with_rules(instruction)


def test_unknown_colour_is_reported() -> None:
    plan = plan_with_rules("recolor the car to blorple")
    assert plan.subtasks == ()
    assert [u.text for u in plan.unsupported] == ["recolor the car to blorple"]
    assert "unknown colour 'blorple'" in plan.unsupported[0].reason


def test_kinds_missing_from_the_tables_are_unsupported() -> None:
    plan = plan_with_rules("expand the image and remove the cat", kinds={"object_removal"})
    assert [(s.id, s.kind) for s in plan.subtasks] == [("s1", "object_removal")]
    assert [u.reason for u in plan.unsupported] == ["'outpainting' is not a subtask kind in the tables"]


def test_kinds_default_to_the_subtask_table() -> None:
    kinds = load_subtask_kinds()
    assert {"object_recoloration", "text_replacement", "outpainting", "global_adjustment"} <= kinds
    # the paper's 24, global adjustments, privacy blur, attribute edits, moves, style, viewpoint and cropping
    assert len(kinds) == 32  # … and background blur


# ------------------------------------------------------------------------------------------------------ validation

KINDS = load_subtask_kinds()


def _sub(id: str, kind: str, target: str | None = None, result: str | None = None, *parents: str) -> Subtask:
    return Subtask(id=id, kind=kind, target=target, result=result, parents=parents)


def test_validate_reorders_an_llm_style_plan() -> None:
    raw = [
        _sub("a", "object_recoloration", "car", "red"),
        _sub("b", "text_detection"),
        _sub("c", "object_replacement", "truck", "car"),
        _sub("d", "text_replacement", "SALE", "OPEN"),
        _sub("e", "outpainting", None, None, "a"),
        _sub("f", "object_removal", "cat and the dog"),
        _sub("g", "object_removal", "cat"),
        _sub("h", "teleportation", "cat"),
        _sub("i", "object_detection", "cat", None, "h"),
    ]
    subtasks, unsupported = validate_subtasks(raw, KINDS)
    # The reads come first, on the photo's own pixels (after the text edit they read, before anything that invents
    # pixels: the replacement, the extension, the removals' fills); then the rest in the order given.
    assert [(s.id, s.kind, s.target, s.result, s.parents) for s in subtasks] == [
        ("s1", "text_replacement", "SALE", "OPEN", ()),
        ("s2", "text_detection", None, None, ("s1",)),
        ("s3", "object_detection", "cat", None, ()),
        ("s4", "object_replacement", "truck", "car", ()),
        ("s5", "object_recoloration", "car", "red", ("s4",)),
        ("s6", "outpainting", None, None, ("s5",)),
        ("s7", "object_removal", "cat", None, ()),
        ("s8", "object_removal", "dog", None, ()),
    ]
    assert [(u.text, u.reason) for u in unsupported] == [
        ("teleportation target='cat'", "'teleportation' is not a subtask kind in the tables")
    ]


def test_validate_links_a_read_to_the_last_text_edit_after_sorting() -> None:
    raw = [
        _sub("read", "text_extraction"),
        _sub("second", "text_removal", "B", None, "first"),
        _sub("first", "text_replacement", "A", "C"),
    ]
    subtasks, _ = validate_subtasks(raw, KINDS)
    assert [(s.id, s.kind, s.parents) for s in subtasks] == [
        ("s1", "text_replacement", ()),
        ("s2", "text_removal", ("s1",)),
        ("s3", "text_extraction", ("s2",)),
    ]


def test_validate_plan_puts_outpainting_first() -> None:
    plan = Plan(instruction="x", subtasks=(_sub("s1", "object_removal", "cat"), _sub("s2", "outpainting")))
    out = validate_plan(plan, KINDS)
    assert [(s.id, s.kind) for s in out.subtasks] == [("s1", "outpainting"), ("s2", "object_removal")]
    assert out.instruction == "x" and out.planner == "rules"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([_sub("a", "object_removal", "cat"), _sub("a", "outpainting")], "repeats subtask ids"),
        ([_sub("a", "object_removal", "cat", None, "zz")], "not other subtasks"),
        ([_sub("a", "object_removal", "cat", None, "b"), _sub("b", "outpainting", None, None, "a")], "cycle"),
        (
            [_sub("a", "object_recoloration", "wall", "red"), _sub("b", "object_recoloration", "wall", "blue")],
            "cannot be both red and blue",
        ),
    ],
    ids=["duplicate-id", "unknown-parent", "cycle", "contradiction"],
)
def test_validate_rejects_bad_plans(raw: list[Subtask], message: str) -> None:
    with pytest.raises(PlanningError, match=message):
        validate_subtasks(raw, KINDS)


def test_split_targets() -> None:
    assert split_targets("car and the bus") == ["car", "bus"]
    assert split_targets("cat, the dog and the bird") == ["cat", "dog", "bird"]
    assert split_targets("salt and pepper shaker") == ["salt and pepper shaker"]
    assert split_targets("man in the red shirt and the dog") == ["man in the red shirt and the dog"]


def test_plans_survive_a_json_round_trip() -> None:
    plan = plan_with_rules("Replace the truck with a car and make it light blue, then add 'SALE' at the top")
    assert Plan.model_validate_json(plan.model_dump_json()) == plan


def test_subtask_table_is_found_from_any_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    load_subtask_kinds.cache_clear()
    assert "object_removal" in load_subtask_kinds()
    bad = tmp_path / "subtasks.yaml"
    bad.write_text("subtasks:\n  - {name: no id}\n", encoding="utf-8")
    with pytest.raises(TableError, match=r"row 1 \(None\): missing"):
        load_subtask_kinds(bad)
    with pytest.raises(TableError, match="cannot read"):
        load_subtask_kinds(tmp_path / "missing.yaml")


# --------------------------------------------------------------------------------------------------- benchmarks


def _benchmark_instructions() -> list[str]:
    found: list[str] = []
    mteditbench = SHARED_BENCHMARKS / "mteditbench_prompts" / "mteditbench_instructions.json"
    if mteditbench.is_file():
        found += [turn for task in json.loads(mteditbench.read_text(encoding="utf-8")) for turn in task["turns"]]
    prompts = SHARED_BENCHMARKS / "costa" / "prompts"
    if prompts.is_dir():
        found += [p.read_text(encoding="utf-8") for p in sorted(prompts.glob("*.txt"))]
    return found


def test_benchmark_instructions_never_crash() -> None:
    instructions = _benchmark_instructions()
    if not instructions:
        pytest.skip(f"no benchmark prompts under {SHARED_BENCHMARKS}")
    start = time.perf_counter()
    planned = 0
    for instruction in instructions:
        try:
            plan = plan_with_rules(instruction)
        except (InputError, PlanningError):
            continue
        planned += bool(plan.subtasks)
        for s in plan.subtasks:
            assert s.kind in KINDS
            assert not s.target or s.target.strip() == s.target
    assert time.perf_counter() - start < 30.0
    assert planned > len(instructions) // 3  # most MTEditBench turns are add/remove/replace/recolour edits


# ------------------------------------------------------------------------------------------ pronouns and phrasing


@pytest.mark.parametrize(
    ("instruction", "expected"),
    [
        ("recolor it to pink", [("object_recoloration", None, "pink", rgb("pink"), ())]),
        ("make it pink", [("object_recoloration", None, "pink", rgb("pink"), ())]),
        ("remove it", [("object_removal", None, None, {}, ())]),
        (
            "recolor it to pink and then detect it",
            [("object_recoloration", None, "pink", rgb("pink"), ()), ("object_detection", None, None, {}, ())],
        ),
    ],
)
def test_it_with_no_object_named_means_the_marked_region(instruction: str, expected: list[Row]) -> None:
    """With nothing named before, "it" is what the user pointed at (or the whole image): target None."""
    assert rows(instruction) == expected


def test_it_after_a_removal_is_still_reported() -> None:
    plan = plan_with_rules("remove it and make it red")
    assert [(s.kind, s.target) for s in plan.subtasks] == [("object_removal", None)]
    assert [u.text for u in plan.unsupported] == ["make it red"]
    assert "removed earlier" in plan.unsupported[0].reason


@pytest.mark.parametrize("instruction", ["make me a sandwich", "Make us a cake"])
def test_make_me_something_is_not_an_edit(instruction: str) -> None:
    plan = plan_with_rules(instruction)
    assert plan.subtasks == ()
    assert "'make me …' asks to create something" in plan.unsupported[0].reason


def test_make_me_a_caption_is_still_captioning() -> None:
    assert rows("make me a caption") == [("image_captioning", None, None, {}, ())]


def test_quoted_kind_words_are_literal_and_bare_ones_are_not() -> None:
    """'email' in quotes is the word; "the email" is whatever email address the image shows."""
    assert rows("redact 'email'")[0][3] == {"literal": True}
    assert rows("redact the email")[0][3] == {}
    assert rows("remove the word phone")[0][3] == {"literal": True}
    assert rows("remove all text")[0][3] == {}


@pytest.mark.parametrize(
    ("instruction", "expected"),
    [
        ("Adjust the lighting to be slightly dimmer", [("global_adjustment", None, "darker", {}, ())]),
        ("Adjust lighting to increase contrast", [("global_adjustment", None, "more contrast", {}, ())]),
        ("change the overall lighting to be warmer", [("global_adjustment", None, "warmer", {}, ())]),
        ("Slightly adjust the brightness to be darker", [("global_adjustment", None, "darker", {}, ())]),
        (
            "Adjust the saturation of the mussels to make them more muted.",
            [("global_adjustment", "mussels", "less saturated", {}, ())],
        ),
        ("Change the mountains to the seaside", [("changing_scenery", None, "seaside", {"from": "mountains"}, ())]),
        ("Turn the kitten into a metal one", [("attribute_edit", "kitten", "metal", {"attribute": "material"}, ())]),
    ],
)
def test_lighting_scenery_and_texture_phrasings(instruction: str, expected: list[Row]) -> None:
    assert rows(instruction) == expected


@pytest.mark.parametrize(
    ("instruction", "reason"),
    [
        ("Adjust the lighting to create a striking visual effect.", "needs a direction"),
        ("Change the brightness of the image.", "needs a direction"),
        ("Rotate the image by 90 degrees", "rotating or flipping the whole image"),
        ("Make the image smaller", "downscaling"),
        ("Denoise the photo", "denoising"),
    ],
)
def test_recognised_but_unplannable_requests_say_why(instruction: str, reason: str) -> None:
    plan = plan_with_rules(instruction)
    assert plan.subtasks == () and reason in plan.unsupported[0].reason


@pytest.mark.parametrize(
    "instruction", ["Entferne die Katze", "Supprime le chat", "把猫去掉", "Quita el perro, por favor"]
)
def test_other_languages_get_a_clear_reason(instruction: str) -> None:
    plan = plan_with_rules(instruction)
    assert plan.subtasks == ()
    assert [u.reason for u in plan.unsupported] == [NOT_ENGLISH]


def test_let_phrasings_with_wear_and_hold_still_add() -> None:
    assert rows("let the man hold an umbrella") == [("object_addition", "man", "umbrella", {"relation": "on"}, ())]


# ------------------------------------------------------------------------------------------------- plan schema


def test_plan_forms_and_json_in_and_out() -> None:
    chain = plan_with_rules("Segment the dog, detect the person, recolor the leaves to red, and expand the image")
    tree = chain.with_form("tree")
    assert tree.form == "tree" and tree.subtasks == chain.subtasks and tree.with_form("chain") == chain
    assert Plan.from_json(tree.to_json(indent=2)) == tree
    data = json.loads(chain.to_json())
    data["subtasks"][0]["name"] = "Outpainting"  # what `costa plan --json` adds for people
    assert Plan.from_json(json.dumps(data)) == chain
    with pytest.raises(InputError, match="not valid JSON"):
        Plan.from_json("{")
    with pytest.raises(InputError, match="not a valid plan"):
        Plan.from_json('{"subtasks": [{"id": "s1", "kind": "x", "parents": ["s9"]}]}')
    with pytest.raises(InputError, match="'chain' or 'tree'"):
        chain.with_form("forest")  # type: ignore[arg-type]


def test_an_adjustment_keeps_its_degree_as_the_amount() -> None:
    """'make the cup a little darker' was planned as plain 'darker' (the degree was dropped, so 'a bit more' repeated
    the whole step); the result stays the word and the degree becomes the `amount` the tool and its check read."""
    from costa.planner import plan_with_rules

    def first(text: str) -> tuple[str | None, object]:
        s = plan_with_rules(text).subtasks[0]
        return s.result, s.params.get("amount")

    assert first("make the cup a little darker") == ("darker", 0.125)
    assert first("make the photo much brighter") == ("brighter", 0.45)
    assert first("brighten the image by 30%") == ("brighter", 0.3)
    assert first("make the photo darker") == ("darker", None)
