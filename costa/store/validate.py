"""What the store accepts, checked before anything is written: ids as bounded whole numbers, text as valid Unicode.

Every value a request carries into the store passes here first, so a bad one is a message naming it and nothing is
half-stored (a lone surrogate used to fail inside the database, after the upload was saved).

Example:
    >>> parse_id("12", "version id")
    12
    >>> parse_id(1e300, "version id")
    Traceback (most recent call last):
    ...
    costa.errors.InputError: version id must be a whole number from 1 to 9007199254740991, got 1e+300
    >>> check_text("caf\\u00e9", "comment")
    'café'
"""

from __future__ import annotations

import re
from typing import Any

from costa.errors import InputError

#: Largest id accepted: 2**53 - 1, exact in a float and in JavaScript, far inside a 64-bit integer column.
MAX_ID = 2**53 - 1
#: Session ids are `secrets.token_urlsafe(18)`: 24 URL-safe characters (a little slack for other generators).
SESSION_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")


def parse_id(value: Any, name: str) -> int:
    """`value` as a whole number in [1, MAX_ID] (an int, an integral float, or its decimal digits).

    Raises:
        InputError: anything else, naming `name` and the value (1e300, 2**63, "abc", True, 1.5).
    """
    out: int | None = None
    if isinstance(value, bool):
        out = None
    elif isinstance(value, int):
        out = value
    elif isinstance(value, float) and value.is_integer() and abs(value) <= MAX_ID:
        out = int(value)
    elif isinstance(value, str) and value.strip().isascii() and value.strip().isdigit() and len(value.strip()) <= 16:
        out = int(value.strip())
    if out is None or not 1 <= out <= MAX_ID:
        shown = f"{value:g}" if isinstance(value, float) else repr(value)[:40]
        raise InputError(f"{name} must be a whole number from 1 to {MAX_ID}, got {shown}")
    return out


def check_text(value: Any, name: str, max_chars: int = 100_000) -> str:
    """`value` when it is text the store can keep: a str, valid Unicode (no lone surrogate), no NUL, bounded.

    Raises:
        InputError: naming `name` and what is wrong, so nothing is stored.
    """
    if not isinstance(value, str):
        raise InputError(f"{name} must be text, got {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InputError(
            f"{name} is not valid Unicode text (a lone surrogate at character {e.start + 1}): nothing was saved; "
            "send it again as plain text"
        ) from None
    if "\x00" in value:
        raise InputError(f"{name} contains a NUL character (at character {value.index(chr(0)) + 1}): nothing was saved")
    if len(value) > max_chars:
        raise InputError(f"{name} is {len(value):,} characters long; at most {max_chars:,} are kept")
    return value


def check_session_id(value: Any) -> str:
    """A syntactically possible session id (`unknown session` for anything else: the message never echoes it).

    Raises:
        InputError: no id, or one no costa session could have.
    """
    if not isinstance(value, str) or not value:
        raise InputError("no session id given: call new_session first")
    if not SESSION_ID.fullmatch(value):
        raise InputError("unknown session: start a new one")
    return value
