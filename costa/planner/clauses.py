"""Split an English edit instruction into clauses, keeping quoted text as data.

Quoted strings ('SALE', "Hello", ‘x’, “x”) are replaced by placeholders before any rule looks at the text, so a quote
never triggers a rule ("replace the text 'remove the cat' with 'hi'" is one clause). The rules read the placeholder back
with `Masked.literal` (the quote's content) or `Masked.restore` (the text as the user wrote it).

>>> m = mask_quotes("Replace 'SALE' with 'OPEN' and then remove the cat.")
>>> [c.text for c in split_clauses(m.text)] == [f"Replace {m.token(0)} with {m.token(1)}", "remove the cat"]
True
>>> m.literal(m.token(1))
'OPEN'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Private-use characters that delimit a placeholder; stripped from user input so a placeholder is always ours.
_OPEN, _CLOSE = "\ue000", "\ue001"
#: A regex fragment matching one placeholder.
QUOTE = _OPEN + r"\d+" + _CLOSE
_PLACEHOLDER = re.compile(_OPEN + r"(\d+)" + _CLOSE)

# Opening quote → the characters that may close it. Single quotes double as apostrophes, so they open only after a
# non-alphanumeric character and close only before one ("the man's hat" has no quote; "'don't'" is one quote).
_CLOSERS: dict[str, str] = {"'": "'’", "‘": "’'", "’": "’'", '"': '"”', "“": '”"', "«": "»"}
_SINGLE = "'‘’"


@dataclass(frozen=True)
class Quote:
    """One quoted string: its opening mark, content and closing mark."""

    open: str
    text: str
    close: str


@dataclass(frozen=True)
class Masked:
    """An instruction with every quoted string replaced by a placeholder token."""

    text: str
    quotes: tuple[Quote, ...]

    def token(self, index: int) -> str:
        return f"{_OPEN}{index}{_CLOSE}"

    def restore(self, span: str) -> str:
        """Put the quotes back into `span`, marks included, as the user wrote them."""

        def sub(m: re.Match[str]) -> str:
            q = self.quotes[int(m.group(1))]
            return q.open + q.text + q.close

        return _PLACEHOLDER.sub(sub, span)

    def literal(self, span: str) -> str | None:
        """The quoted content when `span` is exactly one placeholder (spaces aside), else None."""
        m = _PLACEHOLDER.fullmatch(span.strip())
        return self.quotes[int(m.group(1))].text if m else None

    def literals(self, span: str) -> list[str]:
        """The content of every quote in `span`, in order."""
        return [self.quotes[int(i)].text for i in _PLACEHOLDER.findall(span)]


def mask_quotes(text: str) -> Masked:
    """Replace each quoted string in `text` with a placeholder; unmatched quote marks stay as they are.

    Args:
        text: the user's instruction.

    Returns:
        The masked text and the quotes in order of appearance.
    """
    text = text.replace(_OPEN, "").replace(_CLOSE, "")
    out: list[str] = []
    quotes: list[Quote] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        end = _closing_index(text, i) if c in _CLOSERS else -1
        if end < 0:
            out.append(c)
            i += 1
            continue
        out.append(f"{_OPEN}{len(quotes)}{_CLOSE}")
        quotes.append(Quote(c, text[i + 1 : end], text[end]))
        i = end + 1
    return Masked("".join(out), tuple(quotes))


def _closing_index(text: str, i: int) -> int:
    """Index of the mark closing the quote opened at `i`, or -1 when `text[i]` does not open a quote."""
    c, n = text[i], len(text)
    single = c in _SINGLE
    if single and ((i > 0 and text[i - 1].isalnum()) or i + 1 >= n or text[i + 1].isspace()):
        return -1
    for j in range(i + 1, n):
        if text[j] not in _CLOSERS[c]:
            continue
        if single and ((j + 1 < n and text[j + 1].isalnum()) or text[j - 1].isspace()):
            continue
        return j
    return -1


# ------------------------------------------------------------------------------------------------------ clauses


def _words(text: str, *phrases: str) -> tuple[str, ...]:
    return (*text.split(), *phrases)


#: Verbs that start a new clause after "and" or a comma wherever they appear.
_SPLIT_VERBS: tuple[str, ...] = _words(
    "remove erase delete replace recolor recolour add insert detect segment upscale deblur unblur outpaint expand "
    "extend caption describe redact change make increase decrease reduce brighten darken sharpen enlarge identify "
    "locate extract transcribe write swap substitute transform convert censor analyse analyze rotate move flip "
    "resize adjust enhance improve lighten boost give create generate isolate apply restore estimate introduce "
    "include reposition blow shrink scale wipe ditch select zoom crop stylise stylize render redraw shift drag slide "
    "nudge relocate rearrange double triple halve let",
    "get rid of",
    "take out",
    "cut out",
    "black out",
)
#: Words that are verbs here but nouns often enough ("add paint and brush") that they start a clause only when a
#: determiner or pronoun follows them.
_NOUNISH_VERBS: tuple[str, ...] = _words(
    "paint color colour mask light set show fill place put turn draw blur highlight mark box outline trace clear "
    "drop count find read spot lower raise check crop hide tint dye"
)
_DOUBLED = frozenset({"cut", "put", "set", "blur", "deblur", "unblur", "drop", "spot", "swap", "get", "dye"})


def _gerund(verb: str) -> str:
    """Return the -ing form: remove → removing, cut out → cutting out, blur → blurring."""
    first, _, rest = verb.partition(" ")
    if first in _DOUBLED and first != "dye":
        first += first[-1]
    elif first.endswith("e") and not first.endswith(("ee", "ye")):
        first = first[:-1]
    return (first + "ing " + rest).strip()


#: Gerund → verb, so "while recoloring it" reads as "recolor it".
_GERUNDS: dict[str, str] = {_gerund(v): v for v in _SPLIT_VERBS + _NOUNISH_VERBS}
_DETERMINERS = (
    r"(?:the|a|an|it|its|them|their|this|that|these|those|all|every|each|his|her|my|our|your|some|any|both|more|"
    + QUOTE
    + r")"
)


def _alternation(words: tuple[str, ...]) -> str:
    forms = {w for v in words for w in (v, _gerund(v))}
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(forms, key=len, reverse=True))


# A quote placeholder ends in a non-word character, so "\b" cannot follow it: "(?!\w)" ends a determiner instead.
_VERB_AHEAD = rf"(?:(?:{_alternation(_SPLIT_VERBS)})\b|(?:{_alternation(_NOUNISH_VERBS)})\s+{_DETERMINERS}(?!\w))"

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|[;\n]+")
_SEPARATOR = re.compile(
    r"\s*(?:"
    r",?\s*\band\s+then\b,?"
    r"|,?\s*\bthen\b,?"
    r"|,?\s*(?:\band\s+)?\balso\b,?"
    r"|,?\s*\bwhile\b"
    r"|,?\s*\b(?:and\s+)?(?:after\s+that|afterwards|finally|lastly|additionally)\b,?"
    r"|,\s*(?:and\s+)?(?:next|plus)\b(?!\s+to\b),?"
    rf"|,\s*(?:and\s+)?(?={_VERB_AHEAD})"
    rf"|\s+and\s+(?={_VERB_AHEAD})"
    r")\s*",
    re.IGNORECASE,
)
_LEADING_FILLER = re.compile(
    r"^(?:please|kindly|can\s+you|could\s+you|would\s+you|will\s+you|i\s+want\s+you\s+to|i'?d\s+like\s+you\s+to|"
    r"i\s+would\s+like\s+you\s+to|i\s+want\s+to|i'?d\s+like\s+to|i\s+would\s+like\s+to|let'?s|lets|now|first(?:ly)?|"
    r"second(?:ly)?|then|also|and|next|finally|lastly|afterwards|additionally|plus|after\s+that|ok(?:ay)?|so|"
    r"slightly|subtly|gently|carefully|gradually)\b"
    r"[\s,:]*|^[a-z]+\s*:\s*(?=[a-z])",
    re.IGNORECASE,
)
_TRAILING_FILLER = re.compile(
    r"(?:[\s,]+(?:please|for\s+me|thanks|thank\s+you|and|then|also|too|as\s+well))*[\s.!?,;:]*$", re.IGNORECASE
)
#: Clauses that state a constraint ("while keeping the sky"), which every edit's unchanged-outside check enforces.
_CONSTRAINT = re.compile(
    r"^(?:keep(?:ing)?|preserv(?:e|ing)|maintain(?:ing)?|leav(?:e|ing)|without|ensur(?:e|ing)|making\s+sure|"
    r"retain(?:ing)?)\b(?!\s+(?:only|just)\b)(?!.*\s(?:only|alone)$)",
    re.IGNORECASE,
)

#: … except "keep the cat sharp" (and blur the rest): the subject of a background blur, not a constraint.
_KEEP_SHARP = re.compile(
    r"^(?:keep|leave)\s+(?!(?:the\s+)?(?:background|backdrop|rest|image|photo|picture|whole|everything)\b)"
    r".+?\s+(?:sharp|in\s+focus|crisp|in\s+sharp\s+focus)$",
    re.IGNORECASE,
)


#: A purpose tail ("… to make it brighter", "… in order to show more"): what the edit is for, not another edit.
_PURPOSE = re.compile(
    r"\s+(?:in\s+order\s+)?(?:to|so\s+as\s+to)\s+(?:[a-z]+ly\s+)?(?:make|obscure|hide|cover|frame|leave|show|create|reveal|give|improve|enhance|match|reflect|"
    r"increase|reduce|emphasi[sz]e|highlight|allow|let|keep|achieve|provide|look|appear|be|focus|include|indicate|"
    r"suggest|simulate|represent|depict|convey|display|ensure|maintain|balance|draw|bring|complete|fit|form|get|help|"
    r"mimic|resemble|blend|evoke|create|add|demonstrate|illustrate|capture|accentuate|showcase)\b.*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Clause:
    """One request: masked text without fillers, first verb in its base form; `question` if it ended with '?'.

    `purpose` is the "to make it brighter" tail cut from the text: not a request of its own, but a rule may read a
    direction from it ("adjust the lighting to be dimmer").
    """

    text: str
    question: bool = False
    purpose: str = ""


def split_clauses(masked_text: str) -> list[Clause]:
    """Split masked text into clauses on sentences, ';', ', and', 'then', 'also', 'while' and 'and' before a verb.

    Args:
        masked_text: instruction text from `mask_quotes`.

    Returns:
        Non-empty clauses in the order written; constraint clauses ("keeping the sky unchanged") are dropped.
    """
    clauses: list[Clause] = []
    for sentence in _SENTENCE_END.split(masked_text):
        sentence = sentence.strip()
        if not sentence:
            continue
        question = sentence.endswith("?")
        parts = [p for p in _SEPARATOR.split(sentence) if p and p.strip(" ,")]
        for k, part in enumerate(parts):
            text, purpose = _normalise(part)
            if not text or (_CONSTRAINT.match(text) and not _KEEP_SHARP.match(text)):
                continue
            clauses.append(Clause(text, question and k == len(parts) - 1, purpose))
    return clauses


def _normalise(part: str) -> tuple[str, str]:
    """The clause without fillers and purpose tail, and the purpose tail ("" when none)."""
    text = re.sub(r"\s+", " ", part).strip(" ,")
    previous = None
    while previous != text:
        previous = text
        text = _LEADING_FILLER.sub("", text, count=1).strip()
    text = _TRAILING_FILLER.sub("", text).strip()
    m = _PURPOSE.search(text)
    purpose = m.group(0).strip() if m else ""
    text = text[: m.start()].strip(" ,") if m else text
    return _base_form(text), purpose


def _base_form(text: str) -> str:
    """Turn a leading gerund into the verb ("recoloring it" → "recolor it") so rules see one form."""
    m = re.match(r"[a-z]+ing(?: (?:rid of|out))?\b", text, re.IGNORECASE)
    if m and m.group(0).lower() in _GERUNDS:
        return _GERUNDS[m.group(0).lower()] + text[m.end() :]
    return text
