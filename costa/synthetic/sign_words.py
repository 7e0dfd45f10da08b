"""What the synthetic signs say: sign words, the words that replace them, and contact cards' phone numbers and
email addresses, each drawn from the scene's generator (`costa.synthetic.scenes`)."""

from __future__ import annotations

import numpy as np

#: Sign words: distinct, common on signs, not substrings of one another.
SIGN_WORDS: tuple[str, ...] = (
    "SALE", "OPEN", "EXIT", "COFFEE", "BAKERY", "HOTEL", "MARKET", "PIZZA", "BOOKS", "GARDEN", "STATION", "MUSEUM",
    "PHARMACY", "TICKETS", "FRESH", "BREAD", "DINER", "PARKING", "FLOWERS", "CINEMA", "TAXI", "POLICE", "LIBRARY",
    "BURGER", "WELCOME", "BEACH", "SUSHI", "TEA", "BIKES", "SHOES", "GIFTS", "MUSIC",
)  # fmt: skip
#: Words used as replacements (`result` of a text replacement) and as added text.
NEW_WORDS: tuple[str, ...] = (
    "CLOSED", "ENTRY", "DRINKS", "CAFE", "STORE", "FOOD", "SHOP", "HOURS", "DEALS", "NEWS", "MENU", "PARK",
)  # fmt: skip
_DOMAINS = ("shop", "mail", "bakery", "hotel", "cafe", "books", "market")
_TLDS = ("com", "org", "net")


def _phone(rng: np.random.Generator) -> str:
    a, b, c = int(rng.integers(200, 999)), int(rng.integers(200, 999)), int(rng.integers(1000, 9999))
    forms = (f"{a}-{b}-{c}", f"({a}) {b}-{c}", f"{a}.{b}.{c}", f"+1 {a} {b} {c}")
    return forms[int(rng.integers(len(forms)))]


def _email(rng: np.random.Generator) -> str:
    user = ("info", "hello", "sales", "contact", "team")[int(rng.integers(5))]
    return f"{user}@{_DOMAINS[int(rng.integers(len(_DOMAINS)))]}.{_TLDS[int(rng.integers(len(_TLDS)))]}"


def sign_lines(rng: np.random.Generator) -> tuple[list[str], list[tuple[int, int, int, str]]]:
    """Lines of 1–2 unique words each (1–3 lines); no sensitive spans."""
    n_lines = int(rng.integers(1, 4))
    counts = [int(rng.integers(1, 3)) for _ in range(n_lines)]
    words = [SIGN_WORDS[i] for i in rng.permutation(len(SIGN_WORDS))[: sum(counts)]]
    lines, k = [], 0
    for c in counts:
        lines.append(" ".join(words[k : k + c]))
        k += c
    return lines, []


def contact_lines(rng: np.random.Generator) -> tuple[list[str], list[tuple[int, int, int, str]]]:
    """A title word, a phone line and an email line; spans are (line index, start, end, kind)."""
    title = SIGN_WORDS[int(rng.integers(len(SIGN_WORDS)))]
    phone, email = _phone(rng), _email(rng)
    prefix = ("Call ", "Tel ", "Phone ")[int(rng.integers(3))]
    lines = [title, prefix + phone, email]
    spans = [(1, len(prefix), len(prefix) + len(phone), "phone number"), (2, 0, len(email), "email")]
    if rng.random() < 0.5:  # sometimes the email comes first
        lines[1], lines[2] = lines[2], lines[1]
        spans = [(2, len(prefix), len(prefix) + len(phone), "phone number"), (1, 0, len(email), "email")]
    return lines, spans
