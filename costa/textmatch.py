"""Find which OCR text regions (and which part of each) a subtask's target names.

Pure string and geometry helpers: no images, no OCR. Targets come from the planner in three shapes:

- *everything*: None, "text", "all text", "the text" → every region, whole box;
- *a literal word or phrase*, possibly quoted (``'SALE'``, ``"big sale"``) → regions whose text contains it, matched
  case-insensitively, ignoring spacing and punctuation, and tolerating small OCR errors through a similarity ratio;
- *a kind of text*: "phone number", "email", "date", "price", "url", "number" → a regular expression over the text.

Units: character spans are indices into `TextRegion.text`; boxes are pixels (x, y, w, h) as in `costa.types.Box`;
similarities are ratios in [0, 1] (1 = identical after normalisation).

Example:
    >>> from costa.types import Box, TextRegion
    >>> line = TextRegion(Box(10, 20, 140, 20), "BIG SALE TODAY", 0.98)
    >>> [m.text for m in find_matches([line], "'sale'")]
    ['SALE']
    >>> find_matches([line], "sale")[0].box.x > 10
    True
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from costa.types import Box, TextRegion

#: Targets that mean "all the text in the image".
ALL_TEXT_TARGETS: frozenset[str] = frozenset(
    {"", "text", "all text", "the text", "all the text", "all", "any text", "everything", "all of the text", "texts"}
)

_MONTHS = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"

#: Kinds of text found by pattern rather than by literal match. Keys are canonical names; see `_SEMANTIC_ALIASES`.
SEMANTIC_PATTERNS: dict[str, re.Pattern[str]] = {
    "phone number": re.compile(r"\+?\(?\d[\d\s().\-]{5,}\d"),
    "email": re.compile(r"[\w.+\-]+\s?@\s?[\w\-]+(?:\.[\w\-]+)+", re.IGNORECASE),
    "url": re.compile(
        r"(?:https?://|www\.)\S+"
        r"|(?<![@\w.\-])[\w\-]+(?:\.[\w\-]+)*\.(?:com|org|net|io|co|uk|de|fr|info|biz|edu|gov|ai|app|dev)\b(?:/\S*)?",
        re.IGNORECASE,
    ),
    "date": re.compile(
        r"\b\d{1,4}[/.\-]\d{1,2}[/.\-]\d{1,4}\b"
        rf"|\b{_MONTHS}\s+\d{{1,2}}(?:st|nd|rd|th)?,?(?:\s+\d{{4}})?\b"
        rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTHS}(?:,?\s+\d{{4}})?\b",
        re.IGNORECASE,
    ),
    "price": re.compile(
        r"[$€£¥]\s?\d[\d,]*(?:\.\d{1,2})?|\b\d[\d,]*(?:\.\d{1,2})?\s?(?:usd|eur|gbp|dollars?|euros?|[$€£¥])",
        re.IGNORECASE,
    ),
    "number": re.compile(r"\d+(?:[.,/\-]\d+)*"),  # digit groups joined by . , / - are one number
}

_SEMANTIC_ALIASES: dict[str, str] = {
    "phone number": "phone number",
    "phone numbers": "phone number",
    "phone": "phone number",
    "telephone": "phone number",
    "telephone number": "phone number",
    "mobile number": "phone number",
    "email": "email",
    "emails": "email",
    "e-mail": "email",
    "email address": "email",
    "email addresses": "email",
    "url": "url",
    "urls": "url",
    "website": "url",
    "web address": "url",
    "link": "url",
    "date": "date",
    "dates": "date",
    "price": "price",
    "prices": "price",
    "cost": "price",
    "number": "number",
    "numbers": "number",
    "digits": "number",
}

#: Digits a phone number must have, so that "2024" or "12.5" is not taken for one.
_MIN_PHONE_DIGITS = 7

#: Default similarity ratio for a fuzzy literal match: tolerates one wrong letter in a 4-letter word (ratio 0.75).
DEFAULT_MIN_RATIO = 0.75

_QUOTES = "\"'`“”‘’«»"

# Relative advance widths (fraction of the em) of a typical sans-serif font, used to split a line's box between its
# characters. Approximate by design: the split only needs to land inside the gap between two words.
_NARROW = frozenset("iljI.,:;!|'`()[]")
_SEMI = frozenset('frt-/"')
_WIDE = frozenset("mwMW@%")
_SPACE_WIDTH = 0.32


@dataclass(frozen=True)
class TextMatch:
    """One occurrence of a target inside one text region.

    `start`/`end` index `region.text` (end exclusive); `box` is the pixel sub-box of that span; `similarity` is in
    [0, 1] (1 for an exact or pattern match).
    """

    region: TextRegion
    start: int
    end: int
    box: Box
    similarity: float

    @property
    def text(self) -> str:
        return self.region.text[self.start : self.end]

    @property
    def whole_region(self) -> bool:
        return self.start == 0 and self.end == len(self.region.text)


def normalise_text(text: str) -> str:
    """Lower-case `text` and drop everything but letters and digits, so OCR spacing and punctuation do not matter.

    >>> normalise_text("Big  S.A.L.E!")
    'bigsale'
    """
    return "".join(ch for ch in text.lower() if ch.isalnum())


def text_similarity(a: str, b: str) -> float:
    """Return how alike two strings are in [0, 1] after normalisation (difflib ratio; 1 when both are empty).

    >>> text_similarity("OPEN", "open.")
    1.0
    """
    na, nb = normalise_text(a), normalise_text(b)
    if not na and not nb:
        return 1.0
    return difflib.SequenceMatcher(None, na, nb).ratio()


def clean_target(target: str | None) -> str | None:
    """Strip quotes and filler ("the word", "the text") from a target; None when it means all text.

    >>> clean_target('the word "SALE"'), clean_target("all text")
    ('SALE', None)
    """
    if target is None:
        return None
    quoted = re.search(rf"[{_QUOTES}]([^{_QUOTES}]+)[{_QUOTES}]", target)
    if quoted:
        return quoted.group(1).strip() or None
    text = target.strip().strip(_QUOTES).strip()
    if text.lower() in ALL_TEXT_TARGETS:
        return None
    text = re.sub(r"^(?:the\s+)?(?:word|words|text|phrase|label|sign)\s+", "", text, flags=re.IGNORECASE).strip()
    return text or None


def semantic_kind(target: str | None) -> str | None:
    """Return the canonical kind ("phone number", "email", …) a target names, or None for a literal target.

    >>> semantic_kind("the phone numbers"), semantic_kind("SALE")
    ('phone number', None)
    """
    cleaned = clean_target(target)
    if cleaned is None:
        return None
    key = re.sub(r"^(?:the|all|any|every)\s+", "", cleaned.lower()).strip()
    key = re.sub(r"^(?:the|all|any)\s+", "", key)
    return _SEMANTIC_ALIASES.get(key)


def span_box(region: TextRegion, start: int, end: int) -> Box:
    """Return the pixel sub-box of characters `start:end` of a one-line region.

    The region's width is split in proportion to estimated character advance widths (narrow "i", wide "M"), so that
    replacing "SALE" in "BIG SALE TODAY" touches only that word. Height and y are the region's. The estimate is off by
    a fraction of a character; callers that need exact word edges refine it on pixels (see `costa.glyphs`).

    >>> b = span_box(TextRegion(Box(0, 0, 100, 10), "ab", 1.0), 1, 2)
    >>> (b.x, b.w)
    (50, 50)
    """
    text = region.text
    if not 0 <= start < end <= len(text):
        raise ValueError(f"span {start}:{end} is outside the text {text!r}")
    widths = [_char_width(ch) for ch in text]
    total = sum(widths)
    box = region.box
    x1 = box.x + round(box.w * sum(widths[:start]) / total)
    x2 = box.x + round(box.w * sum(widths[:end]) / total)
    return Box(x1, box.y, max(1, x2 - x1), box.h, label=text[start:end], score=region.score)


def find_matches(
    regions: Sequence[TextRegion], target: str | None, min_ratio: float = DEFAULT_MIN_RATIO
) -> tuple[TextMatch, ...]:
    """Return every occurrence of `target` in `regions`, in the regions' order.

    Args:
        regions: OCR lines.
        target: None / "all text" (every region, whole box), a kind of text ("phone number"…) or a literal, possibly
            quoted, word or phrase.
        min_ratio: least similarity in [0, 1] for a fuzzy literal match (targets of 3 characters or fewer must match
            exactly after normalisation).
    """
    cleaned = clean_target(target)
    out: list[TextMatch] = []
    for region in regions:
        if not region.text:
            continue
        if cleaned is None:
            out.append(TextMatch(region, 0, len(region.text), region.box, 1.0))
            continue
        kind = semantic_kind(cleaned)
        spans = _pattern_spans(region.text, kind) if kind else _literal_spans(region.text, cleaned, min_ratio)
        for start, end, similarity in spans:
            box = region.box if (start, end) == (0, len(region.text)) else span_box(region, start, end)
            out.append(TextMatch(region, start, end, box, similarity))
    return tuple(out)


def select_regions(
    regions: Sequence[TextRegion], target: str | None, min_ratio: float = DEFAULT_MIN_RATIO
) -> tuple[TextRegion, ...]:
    """Return the regions that contain `target` (all of them for None / "text" / "all text"), in input order.

    >>> from costa.types import Box, TextRegion
    >>> rs = [TextRegion(Box(0, 0, 50, 10), "Call 555-123-4567", 0.9), TextRegion(Box(0, 20, 50, 10), "Hello", 0.9)]
    >>> [r.text for r in select_regions(rs, "phone number")], len(select_regions(rs, None))
    (['Call 555-123-4567'], 2)
    """
    seen: list[TextRegion] = []
    for match in find_matches(regions, target, min_ratio):
        if not any(match.region is r for r in seen):
            seen.append(match.region)
    return tuple(seen)


def match_score(haystack: str, needle: str) -> float:
    """Return the best similarity in [0, 1] between `needle` and any same-length stretch of `haystack`.

    Used by checks: "does OCR read OPEN somewhere in this crop?" (1.0 when it is there verbatim).

    >>> match_score("BIG OPEN TODAY", "open"), match_score("BIG 0PEN", "OPEN"), match_score("TODAY", "SALE")
    (1.0, 0.75, 0.25)
    """
    hay, ndl = normalise_text(haystack), normalise_text(needle)
    if not ndl:
        return 1.0
    if not hay:
        return 0.0
    if ndl in hay:
        return 1.0
    return max((ratio for _, _, ratio in _windows(hay, ndl)), default=0.0)


def reading_order(regions: Sequence[TextRegion]) -> tuple[TextRegion, ...]:
    """Sort regions top-to-bottom, then left-to-right within a line (boxes overlapping vertically by half share a line).

    >>> from costa.types import Box, TextRegion
    >>> rs = [TextRegion(Box(60, 2, 30, 10), "b", 1), TextRegion(Box(0, 0, 30, 10), "a", 1),
    ...       TextRegion(Box(0, 30, 30, 10), "c", 1)]
    >>> [r.text for r in reading_order(rs)]
    ['a', 'b', 'c']
    """
    return tuple(r for line in _lines(regions) for r in line)


def join_lines(regions: Sequence[TextRegion]) -> str:
    """Return the regions' text in reading order: one line per visual line, regions on a line joined by a space."""
    return "\n".join(" ".join(r.text for r in line) for line in _lines(regions))


# ------------------------------------------------------------------------------------------------------- helpers


def _lines(regions: Sequence[TextRegion]) -> list[list[TextRegion]]:
    lines: list[list[TextRegion]] = []
    for region in sorted(regions, key=lambda r: (r.box.y + r.box.h / 2, r.box.x)):
        if lines:
            ref = lines[-1][0].box
            overlap = min(ref.y2, region.box.y2) - max(ref.y, region.box.y)
            if overlap >= 0.5 * min(ref.h, region.box.h):
                lines[-1].append(region)
                continue
        lines.append([region])
    return [sorted(line, key=lambda r: r.box.x) for line in lines]


def _char_width(ch: str) -> float:
    if ch.isspace():
        return _SPACE_WIDTH
    if ch in _NARROW:
        return 0.3
    if ch in _SEMI:
        return 0.42
    if ch in _WIDE:
        return 0.95
    if ch.isupper():
        return 0.72
    if ch.isdigit():
        return 0.64
    return 0.6


def _normalised_index(text: str) -> tuple[str, list[int]]:
    """Normalise `text` and return, for each kept character, its index in `text`."""
    kept: list[str] = []
    index: list[int] = []
    for i, ch in enumerate(text.lower()):
        if ch.isalnum():
            kept.append(ch)
            index.append(i)
    return "".join(kept), index


def _literal_spans(text: str, target: str, min_ratio: float) -> list[tuple[int, int, float]]:
    """Spans of `text` (raw indices) that match `target`: every exact occurrence, else the best fuzzy window."""
    norm, index = _normalised_index(text)
    needle = normalise_text(target)
    if not needle or not norm:
        return []
    spans: list[tuple[int, int, float]] = []
    pos = norm.find(needle)
    while pos >= 0:
        spans.append((index[pos], index[pos + len(needle) - 1] + 1, 1.0))
        pos = norm.find(needle, pos + len(needle))
    if spans or len(needle) <= 3:
        return spans
    best = max(_windows(norm, needle), key=lambda w: w[2], default=None)
    if best is None or best[2] < min_ratio:
        return []
    return [(index[best[0]], index[best[1] - 1] + 1, best[2])]


def _windows(hay: str, needle: str) -> list[tuple[int, int, float]]:
    """Score every stretch of normalised `hay` against normalised `needle`: (start, end, similarity in [0, 1]).

    Similarity is matching characters over the longer length, so one wrong, missing or extra letter in a 4-letter word
    scores 0.75. Stretches one shorter or longer than the needle (a dropped or doubled letter) are tried only for
    needles of 5+ characters, where they cannot turn "ale" into a match for "sale".
    """
    n = len(needle)
    sizes = (n - 1, n, n + 1) if n >= 5 else (n,)
    out: list[tuple[int, int, float]] = []
    for size in sizes:
        for i in range(len(hay) - size + 1):
            window = hay[i : i + size]
            matcher = difflib.SequenceMatcher(None, window, needle, autojunk=False)
            matched = sum(block.size for block in matcher.get_matching_blocks())
            out.append((i, i + size, matched / max(size, n)))
    if not out and hay:
        matcher = difflib.SequenceMatcher(None, hay, needle, autojunk=False)
        matched = sum(block.size for block in matcher.get_matching_blocks())
        out.append((0, len(hay), matched / max(len(hay), n)))
    return out


def _pattern_spans(text: str, kind: str) -> list[tuple[int, int, float]]:
    spans: list[tuple[int, int, float]] = []
    for m in SEMANTIC_PATTERNS[kind].finditer(text):
        start, end = m.start(), m.end()
        while end > start and text[end - 1] in " .,;:)":
            end -= 1
        if kind == "phone number" and sum(ch.isdigit() for ch in text[start:end]) < _MIN_PHONE_DIGITS:
            continue
        if end > start:
            spans.append((start, end, 1.0))
    return spans
