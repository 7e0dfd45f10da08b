"""Decide whether OCR read exactly the text that was asked for, and whether that text is new.

A check that asks "does it say 555-0128 now?" must not accept "555-0123", and one that asks "does it say CLOSED?"
must not accept "CLOSE". The rules:

- *exact text* — anything with a digit, an ``@`` or a currency sign (phone numbers, e-mails, prices, dates, codes)
  and any text of at most 6 letters and digits — must be read exactly, case-insensitively, with only the OCR
  look-alikes O/0 and I/l/1 forgiven, and only where the context justifies it: a digit read for a look-alike letter
  inside a word of letters ("0PEN" for OPEN), a letter read for a look-alike digit inside a run of digits
  ("555-O128"). Never between a digit and a digit, or a letter and a letter;
- *longer text* may differ by one edit (a letter wrong, missing or extra), not more;
- the match must start and end on a token boundary (a space, punctuation, a letter↔digit change or the end of the
  read), so "CLOSED" does not contain "CLOSE";
- text that was already readable in the same place before the edit does not count as added: the occurrences after
  must outnumber those before.

Case is ignored: the tools draw the user's string as given, and OCR confuses the case of c, o, s, v, w, x and z.

Pure string functions, no images, no OCR.

Example:
    >>> find_text("CALL 555-0123", "555-0128").found, find_text("CALL 555-0128", "555-0128").found
    (False, True)
    >>> find_text("CLOSE", "CLOSED").found, find_text("PHARMACV", "PHARMACY").found
    (False, True)
    >>> text_added("OPEN NOW", "OPEN NOW", "NOW").found
    False
"""

from __future__ import annotations

from dataclasses import dataclass

#: Texts with at most this many letters and digits must match exactly.
EXACT_MAX_CHARS = 6
#: Edits a longer text may differ by (one OCR confusion).
LONG_TEXT_EDITS = 1
#: Quality of a match with one tolerated edit; an exact match scores 1.0, a miss at most `MISS_CEILING`.
ONE_EDIT_QUALITY = 0.9
#: Highest quality a text that was not found can get (below the tables' 0.8 pass threshold).
MISS_CEILING = 0.5

_LOOKALIKES: dict[str, str] = {"0": "o", "o": "o", "1": "i", "l": "i", "i": "i", "|": "i"}
_EXACT_MARKS = frozenset("@$€£¥%")


@dataclass(frozen=True)
class TextFound:
    """How `wanted` was found in a read.

    `found` says whether it counts as there; `count` is how many separate occurrences count; `edits` is the least
    number of (non-forgiven) edits of the best occurrence (-1 when nothing comparable was read); `quality` is in
    [0, 1]: 1.0 exact, 0.9 one tolerated edit, else at most 0.5 scaled by similarity; `reason` says which rule decided.
    """

    found: bool
    count: int
    edits: int
    quality: float
    reason: str


def needs_exact(text: str) -> bool:
    """Whether `text` must be read exactly: it holds a digit, an ``@`` or a currency sign, or ≤ 6 letters/digits.

    >>> needs_exact("555-0128"), needs_exact("CLOSED"), needs_exact("PHARMACY"), needs_exact("info@cafe.com")
    (True, True, False, True)
    """
    core = _normalise(text)
    return len(core) <= EXACT_MAX_CHARS or any(ch.isdigit() or ch in _EXACT_MARKS for ch in text)


def find_text(read: str, wanted: str) -> TextFound:
    """Find `wanted` in the OCR text `read` by the rules of this module (exact, or one edit for long text).

    Args:
        read: what OCR read (lines joined by newlines or spaces).
        wanted: the text the user asked for.
    """
    needle = _normalise(wanted)
    if not needle:
        return TextFound(True, 1, 0, 1.0, "nothing to look for")
    hay, bounds = _tokens(read)
    allowed = 0 if needs_exact(wanted) else LONG_TEXT_EDITS
    rule = "must match exactly" if allowed == 0 else f"may differ by {allowed} edit"
    context = _digit_context(wanted)
    best = -1
    count = 0
    end_of_last = -1
    for start in sorted(bounds):
        if start >= len(hay) or start < end_of_last:
            continue
        hit = None
        for size in _sizes(len(needle), allowed):
            end = start + size
            if end > len(hay) or end not in bounds:
                continue
            edits = _edits(hay[start:end], needle, context)
            if best < 0 or edits < best:
                best = edits
            if edits <= allowed and (hit is None or edits < hit[1]):
                hit = (end, edits)
        if hit is not None:
            count += 1
            end_of_last = hit[0]
    if count:
        quality = 1.0 if best == 0 else ONE_EDIT_QUALITY
        how = "exactly" if best == 0 else f"with {best} OCR confusion"
        return TextFound(True, count, best, quality, f"{wanted!r} read {how} ({rule})")
    similarity = _similarity(hay, needle)
    return TextFound(False, 0, best, MISS_CEILING * similarity, f"{wanted!r} not read in {read.strip()!r} ({rule})")


def text_added(before_read: str, after_read: str, wanted: str) -> TextFound:
    """Whether `wanted` is new in `after_read`: found there more often than in `before_read` (the same place before).

    The returned record is `find_text(after_read, wanted)`, turned into a miss (quality ≤ 0.3) when the text was
    already there as often before the edit.
    """
    after = find_text(after_read, wanted)
    if not after.found:
        return after
    before = find_text(before_read, wanted)
    if before.found and before.count >= after.count:
        return TextFound(
            False,
            0,
            after.edits,
            min(0.3, after.quality),
            f"{wanted!r} was already readable there before the edit ({before_read.strip()!r}): nothing was added",
        )
    return after


# ------------------------------------------------------------------------------------------------------ helpers


def _normalise(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _tokens(read: str) -> tuple[str, frozenset[int]]:
    """Normalised `read` and the positions in it where a token starts or ends."""
    kept: list[str] = []
    bounds = {0}
    gap = False
    for ch in read.lower():
        if ch.isalnum():
            if kept and (gap or kept[-1].isdigit() != ch.isdigit()):
                bounds.add(len(kept))
            kept.append(ch)
            gap = False
        else:
            gap = True
    bounds.add(len(kept))
    return "".join(kept), frozenset(bounds)


def _sizes(n: int, allowed: int) -> range:
    return range(max(1, n - allowed), n + allowed + 1)


def _digit_context(text: str) -> list[bool]:
    """Per kept character of `text`: is it in a digit context (its token, split on anything not a letter or digit,
    has more digits than letters)?"""
    out: list[bool] = []
    token: list[str] = []
    for ch in [*text.lower(), " "]:  # tokens of the same characters `_normalise` keeps (any letter or digit)
        if ch.isalnum():
            token.append(ch)
            continue
        out += [sum(c.isdigit() for c in token) > sum(c.isalpha() for c in token)] * len(token)
        token = []
    return out


def _same(read: str, want: str, digit_context: bool) -> bool:
    """Equal, or an OCR look-alike that the context justifies (a digit for a letter among letters, or back)."""
    if read == want:
        return True
    if read not in _LOOKALIKES or want not in _LOOKALIKES or _LOOKALIKES[read] != _LOOKALIKES[want]:
        return False
    if read.isdigit() == want.isdigit():
        return False  # l for i, or I for |: letters OCR tells apart; never a digit for another digit
    return want.isdigit() == digit_context


def _edits(read: str, want: str, want_ctx: list[bool]) -> int:
    """Levenshtein distance with justified look-alikes free (see `_same`)."""
    prev = list(range(len(want) + 1))
    for i, rc in enumerate(read, 1):
        cur = [i] + [0] * len(want)
        for j, wc in enumerate(want, 1):
            sub = prev[j - 1] + (0 if _same(rc, wc, want_ctx[j - 1]) else 1)
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, sub)
        prev = cur
    return prev[-1]


def _similarity(hay: str, needle: str) -> float:
    """Best share of `needle` matched by any same-length stretch of `hay` (0 when nothing was read)."""
    if not hay:
        return 0.0
    n = len(needle)
    if len(hay) <= n:
        return max(0.0, 1.0 - _edits(hay, needle, [False] * n) / n)
    best = 0.0
    ctx = [False] * n
    for i in range(len(hay) - n + 1):
        best = max(best, 1.0 - _edits(hay[i : i + n], needle, ctx) / n)
    return best
