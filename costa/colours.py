"""Colour names ↔ sRGB triples: what "make the car pink" means in pixels.

The name table lives in tool_tables/colours.csv (name,r,g,b; sRGB 0–255) and is read on first use, never at import.
`parse_colour` is what the planner and the recolouring tools call; `colour_name` goes the other way for messages.

Example:
    >>> parse_colour("Pink")
    (255, 192, 203)
    >>> parse_colour("#00ff80")
    (0, 255, 128)
    >>> parse_colour("rgb(10, 20, 30)")
    (10, 20, 30)
    >>> parse_colour("light pink") != parse_colour("pink")
    True
    >>> parse_colour("plaid") is None
    True
    >>> colour_name((250, 190, 200))
    'pink'
"""

from __future__ import annotations

import csv
import functools
import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from costa.errors import TableError

RGB = tuple[int, int, int]

#: Where the colour-name table lives (repository-relative, next to the other tool tables).
COLOURS_CSV: Path = Path(__file__).resolve().parent.parent / "tool_tables" / "colours.csv"

# Modifier word → (mix target, fraction mixed in). Mixing in sRGB toward white/black keeps the hue and is what people
# mean by "light"/"dark" closely enough for a recolouring target. A phrase that is itself a table name ("light blue",
# "dark red") uses the table's entry; the modifier applies only to other combinations ("light pink", "dark teal").
_MODIFIERS: dict[str, tuple[RGB, float]] = {
    "light": ((255, 255, 255), 0.45),
    "pale": ((255, 255, 255), 0.55),
    "pastel": ((255, 255, 255), 0.5),
    "dark": ((0, 0, 0), 0.4),
    "deep": ((0, 0, 0), 0.3),
}
_HEX6 = re.compile(r"#([0-9a-f]{6})")
_HEX3 = re.compile(r"#([0-9a-f]{3})")
_RGB_FN = re.compile(r"rgb\(\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})\s*\)")


@functools.cache
def load_colour_table(path: Path = COLOURS_CSV) -> Mapping[str, RGB]:
    """Read the colour-name table once per process.

    Returns:
        An immutable mapping from lower-case name ("light blue") to its sRGB triple (0–255 each).

    Raises:
        TableError: the file is missing, or a row is malformed (the message names the file and the row).
    """
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
    except OSError as e:
        raise TableError(f"cannot read colour table {path}: {e}") from e
    table: dict[str, RGB] = {}
    for lineno, row in enumerate(rows, start=2):
        try:
            name = _normalise(row["name"])
            rgb = (int(row["r"]), int(row["g"]), int(row["b"]))
        except (KeyError, TypeError, ValueError) as e:
            raise TableError(f"{path}:{lineno}: expected name,r,g,b with integer channels, got {row!r}") from e
        if not name or not all(0 <= c <= 255 for c in rgb):
            raise TableError(f"{path}:{lineno}: channel values must be 0–255 and the name non-empty, got {row!r}")
        if name in table:
            raise TableError(f"{path}:{lineno}: duplicate colour name {name!r}")
        table[name] = rgb
    return MappingProxyType(table)


def __getattr__(name: str) -> Mapping[str, RGB]:
    # `COLOUR_NAMES` is a lazy module attribute (PEP 562): the CSV is read on first access, not at import.
    if name == "COLOUR_NAMES":
        return load_colour_table()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _normalise(text: str) -> str:
    text = text.strip().lower().replace("-", " ").replace("_", " ")
    text = re.sub(r"\bgray\b", "grey", text)
    text = re.sub(r"\b(colou?r(ed)?)\b", " ", text)
    return " ".join(text.split())


def parse_colour(text: str) -> RGB | None:
    """Turn a colour phrase into sRGB.

    Accepts a table name in any case ("Navy", "light blue"), a name with a modifier ("light pink", "dark teal",
    "pale yellow"), "pinkish", `#rrggbb`, `#rgb` and `rgb(r, g, b)` with channels 0–255; "gray" is read as "grey" and
    a trailing "colour"/"color"/"coloured" is ignored.

    Returns:
        The (r, g, b) triple, or None when the text names no colour we know (callers decide whether that is an error).
    """
    if not isinstance(text, str):
        return None
    raw = text.strip().lower()
    if m := _HEX6.fullmatch(raw):
        h = m.group(1)
        return (int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16))
    if m := _HEX3.fullmatch(raw):
        h = m.group(1)
        return (int(h[0] * 2, 16), int(h[1] * 2, 16), int(h[2] * 2, 16))
    if m := _RGB_FN.fullmatch(raw):
        rgb = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
        return rgb if all(c <= 255 for c in rgb) else None
    name = _normalise(raw)
    table = load_colour_table()
    if name in table:
        return table[name]
    if name.endswith("ish") and name[:-3] in table:
        return table[name[:-3]]
    first, _, rest = name.partition(" ")
    if first in _MODIFIERS and rest:
        base = parse_colour(rest)
        if base is None:
            return None
        target, fraction = _MODIFIERS[first]
        return tuple(round(c + fraction * (t - c)) for c, t in zip(base, target, strict=True))  # type: ignore[return-value]
    return None


def rgb_to_lab(rgb: RGB) -> tuple[float, float, float]:
    """Convert one sRGB triple (0–255) to CIELAB (D65; L in 0–100), in pure Python so this module imports cheaply."""

    def linear(c: float) -> float:
        c /= 255.0
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(float(c)) for c in rgb)
    x = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047
    y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * b
    z = (0.0193339 * r + 0.1191920 * g + 0.9503041 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1.0 / 3.0) if t > (6.0 / 29.0) ** 3 else t / (3 * (6.0 / 29.0) ** 2) + 4.0 / 29.0

    fx, fy, fz = f(x), f(y), f(z)
    return (116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz))


def colour_name(rgb: RGB) -> str:
    """Name the table colour nearest to `rgb` (Euclidean distance in CIELAB, i.e. ΔE76), for messages and reasons."""
    lab = rgb_to_lab(rgb)
    best, best_d = "", float("inf")
    for name, ref in load_colour_table().items():
        d = sum((p - q) ** 2 for p, q in zip(lab, _lab_of(ref), strict=True))
        if d < best_d:
            best, best_d = name, d
    return best


@functools.cache
def _lab_of(rgb: RGB) -> tuple[float, float, float]:
    return rgb_to_lab(rgb)
