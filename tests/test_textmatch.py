"""costa.textmatch: which regions (and which part of each) a target names. Pure, exact answers."""

from __future__ import annotations

import doctest

import pytest

import costa.textmatch as textmatch
from costa.textmatch import (
    clean_target,
    find_matches,
    join_lines,
    match_score,
    normalise_text,
    reading_order,
    select_regions,
    semantic_kind,
    span_box,
    text_similarity,
)
from costa.types import Box, TextRegion


def region(text: str, x: int = 0, y: int = 0, w: int = 200, h: int = 20, score: float = 0.9) -> TextRegion:
    return TextRegion(Box(x, y, w, h), text, score)


SIGN = (
    region("BIG SALE TODAY", y=0),
    region("Call 555-123-4567", y=40),
    region("mail: info@shop.example.com", y=80),
    region("Offer ends 12/08/2025", y=120),
    region("Only $19.99", y=160),
    region("visit www.shop.com/deals", y=200),
)


def texts(regions: tuple[TextRegion, ...]) -> list[str]:
    return [r.text for r in regions]


def test_doctests_pass() -> None:
    assert doctest.testmod(textmatch).failed == 0


@pytest.mark.parametrize("target", [None, "", "text", "all text", "The Text", "  all the text "])
def test_all_text_targets_select_every_region(target: str | None) -> None:
    assert select_regions(SIGN, target) == SIGN
    assert all(m.whole_region and m.box == m.region.box for m in find_matches(SIGN, target))


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("SALE", "SALE"),
        ("sale", "SALE"),
        ("'sale'", "SALE"),
        ('the word "Sale"', "SALE"),
        ("“SALE”", "SALE"),
        ("big sale", "BIG SALE"),
        ("BIGSALE", "BIG SALE"),  # OCR dropped or added a space
        ("S.A.L.E.", "SALE"),  # punctuation ignored
    ],
)
def test_literal_targets_match_case_spacing_and_punctuation_insensitively(target: str, expected: str) -> None:
    matches = find_matches(SIGN, target)
    assert [m.text for m in matches] == [expected]
    assert matches[0].region is SIGN[0]
    assert matches[0].similarity == 1.0


def test_fuzzy_match_tolerates_one_ocr_error_but_not_unrelated_words() -> None:
    misread = (region("BIG SA1E TODAY"),)
    match = find_matches(misread, "SALE")
    assert [m.text for m in match] == ["SA1E"]
    assert match[0].similarity == pytest.approx(0.75)
    assert find_matches(misread, "SALE", min_ratio=0.8) == ()
    assert select_regions(SIGN, "CLOSED") == ()
    assert select_regions((region("female"),), "SALT") == ()


def test_short_targets_must_match_exactly() -> None:
    assert select_regions((region("BIG SALE"),), "BAG") == ()
    assert texts(select_regions((region("BIG SALE"),), "big")) == ["BIG SALE"]


def test_every_occurrence_in_a_line_is_found() -> None:
    matches = find_matches((region("SALE SALE SALE"),), "sale")
    assert [(m.start, m.end) for m in matches] == [(0, 4), (5, 9), (10, 14)]
    assert [m.box.x for m in matches] == sorted(m.box.x for m in matches)


@pytest.mark.parametrize(
    ("target", "kind", "expected"),
    [
        ("phone number", "phone number", "555-123-4567"),
        ("the phone numbers", "phone number", "555-123-4567"),
        ("telephone", "phone number", "555-123-4567"),
        ("email address", "email", "info@shop.example.com"),
        ("date", "date", "12/08/2025"),
        ("price", "price", "$19.99"),
        ("website", "url", "www.shop.com/deals"),
    ],
)
def test_semantic_targets_match_by_pattern(target: str, kind: str, expected: str) -> None:
    assert semantic_kind(target) == kind
    assert [m.text for m in find_matches(SIGN, target)] == [expected]


def test_number_target_and_phone_digit_minimum() -> None:
    numbers = [m.text for m in find_matches(SIGN, "numbers")]
    assert "555-123-4567" in numbers and "19.99" in numbers
    assert find_matches((region("Since 2024"), region("Tel 12 34")), "phone number") == ()
    assert [m.text for m in find_matches((region("(555) 123 4567"),), "phone")] == ["(555) 123 4567"]


def test_dates_in_words() -> None:
    rs = (region("Opens March 3rd, 2025"), region("until 14 Feb"))
    assert [m.text for m in find_matches(rs, "dates")] == ["March 3rd, 2025", "14 Feb"]


def test_clean_target() -> None:
    assert clean_target(None) is None
    assert clean_target("ALL TEXT") is None
    assert clean_target("'OPEN NOW'") == "OPEN NOW"
    assert clean_target("the text OPEN") == "OPEN"
    assert clean_target("word SALE") == "SALE"
    assert semantic_kind("SALE") is None and semantic_kind(None) is None


def test_span_box_splits_in_proportion_to_character_widths() -> None:
    line = region("BIG SALE TODAY", x=100, y=50, w=300, h=30)
    sale = span_box(line, 4, 8)
    big = span_box(line, 0, 3)
    today = span_box(line, 9, 14)
    assert (sale.y, sale.h) == (50, 30)
    assert big.x == 100
    assert big.x2 < sale.x < sale.x2 < today.x
    assert today.x2 == 400
    assert sale.label == "SALE"
    # narrow letters take less room than wide ones
    assert span_box(region("iiMM", w=100), 0, 2).w < span_box(region("iiMM", w=100), 2, 4).w
    with pytest.raises(ValueError, match="outside"):
        span_box(line, 5, 40)


def test_word_match_box_is_inside_its_line() -> None:
    line = region("BIG SALE TODAY", x=10, y=5, w=280, h=32)
    (match,) = find_matches((line,), "SALE")
    assert not match.whole_region
    assert line.box.x < match.box.x and match.box.x2 < line.box.x2
    assert 0.2 < match.box.w / line.box.w < 0.4


def test_reading_order_and_join_lines() -> None:
    rs = (
        region("world", x=120, y=3, w=60),
        region("second line", x=0, y=40, w=100),
        region("hello", x=10, y=0, w=60),
    )
    assert texts(reading_order(rs)) == ["hello", "world", "second line"]
    assert join_lines(rs) == "hello world\nsecond line"
    assert join_lines(()) == ""


def test_similarity_helpers() -> None:
    assert normalise_text(" Open-Now! ") == "opennow"
    assert text_similarity("OPEN", "open") == 1.0
    assert text_similarity("", "") == 1.0
    assert text_similarity("OPEN", "SALE") < 0.3
    assert match_score("BIG OPEN TODAY", "OPEN") == 1.0
    assert match_score("BIG 0PEN TODAY", "OPEN") == pytest.approx(0.75)
    assert match_score("", "OPEN") == 0.0
    assert match_score("anything", "") == 1.0
    assert match_score("OP", "OPEN") == pytest.approx(0.5)
