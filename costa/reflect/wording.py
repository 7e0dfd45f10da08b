"""Small word tests and rewrites the reference readers share (`costa.reflect.references`, `costa.reflect.memory`):
whether words name a colour or an adjustment, and an instruction with its target swapped."""

from __future__ import annotations

import re


def is_colour(words: str) -> bool:
    from costa.colours import parse_colour

    try:
        return parse_colour(words.strip()) is not None
    except Exception:  # a malformed colour table raises: then it is not a colour we know
        return False


def is_adjustment(words: str) -> bool:
    """Whether `words` name a global adjustment ("brighter", "a bit warmer", "more contrast")."""
    from costa.errors import ToolError
    from costa.tools.adjust import parse_adjustment

    try:
        parse_adjustment(words)
    except ToolError:
        return False
    return len(words.split()) <= 4  # a short value, not a whole instruction that mentions one


def swap_target(instruction: str, old: str, new: str) -> str:
    """`instruction` with its target `old` replaced by `new` (quoted words by quoted words, phrases by phrases)."""
    quoted_new = re.match(r"^(?:the (?:word|text) )?['\"](.+)['\"]$", new.strip(), re.I)
    bare_old = old.strip("'\" ")
    if quoted_new:
        return re.sub(rf"(['\"]){re.escape(bare_old)}(['\"])", rf"\g<1>{quoted_new.group(1)}\g<2>", instruction)
    phrase = new if new.lower().startswith(("the ", "a ", "an ")) else f"the {new}"
    quoted_old = rf"(?:the (?:word|text) )?['\"]{re.escape(bare_old)}['\"]"
    if re.search(quoted_old, instruction, re.I):
        return re.sub(quoted_old, phrase, instruction, flags=re.I)
    out = re.sub(rf"\bthe {re.escape(bare_old)}\b", phrase, instruction, flags=re.I)
    if out == instruction:
        out = re.sub(rf"\b{re.escape(bare_old)}\b", phrase, instruction, flags=re.I)
    return out
