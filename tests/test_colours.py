"""Colour phrases → sRGB, and back to the nearest name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from costa import colours
from costa.colours import colour_name, load_colour_table, parse_colour, rgb_to_lab
from costa.errors import TableError

REQUIRED = (
    *("pink", "yellow", "teal", "navy", "beige", "gold", "silver", "maroon", "olive", "turquoise", "lavender"),
    *("red", "green", "blue", "white", "black", "grey", "orange", "purple", "brown", "cyan", "magenta"),
)


def test_table_has_the_common_colours() -> None:
    table = colours.COLOUR_NAMES
    assert len(table) >= 60
    assert set(REQUIRED) <= set(table)
    assert all(len(rgb) == 3 and all(0 <= c <= 255 for c in rgb) for rgb in table.values())
    with pytest.raises(TypeError):
        table["pink"] = (0, 0, 0)  # type: ignore[index]


@pytest.mark.parametrize(
    ("text", "rgb"),
    [
        ("pink", (255, 192, 203)),
        ("PINK", (255, 192, 203)),
        ("  Navy ", (0, 0, 128)),
        ("gray", (128, 128, 128)),
        ("light blue", (173, 216, 230)),  # a table name wins over the modifier rule
        ("Light-Blue", (173, 216, 230)),
        ("dark red", (139, 0, 0)),
        ("teal colour", (0, 128, 128)),
        ("pinkish", (255, 192, 203)),
        ("#FF8000", (255, 128, 0)),
        ("#0f8", (0, 255, 136)),
        ("rgb(1, 2, 3)", (1, 2, 3)),
        ("RGB( 10,20 ,30 )", (10, 20, 30)),
    ],
)
def test_parse_colour_accepts_names_hex_and_rgb(text: str, rgb: tuple[int, int, int]) -> None:
    assert parse_colour(text) == rgb


@pytest.mark.parametrize(
    "text", ["plaid", "", "light", "light plaid", "#12345", "#gggggg", "rgb(256, 0, 0)", "red-ish!"]
)
def test_parse_colour_returns_none_for_unknown(text: str) -> None:
    assert parse_colour(text) is None


def test_modifiers_lighten_and_darken_keeping_hue() -> None:
    pink, light, dark = parse_colour("pink"), parse_colour("light pink"), parse_colour("dark teal")
    assert pink and light and dark
    assert all(a >= b for a, b in zip(light, pink, strict=True)) and light != pink
    teal = parse_colour("teal")
    assert teal and all(a <= b for a, b in zip(dark, teal, strict=True)) and dark != teal
    assert rgb_to_lab(parse_colour("pale yellow"))[0] > rgb_to_lab(parse_colour("yellow"))[0]  # type: ignore[arg-type]


def test_colour_name_round_trips_every_table_entry() -> None:
    table = load_colour_table()
    for name, rgb in table.items():
        assert table[colour_name(rgb)] == rgb, name  # aliases (fuchsia/magenta) share a value
    assert colour_name((250, 190, 200)) == "pink"
    assert colour_name((2, 2, 5)) == "black"


def test_rgb_to_lab_matches_scikit_image() -> None:
    from skimage.color import rgb2lab

    for rgb in [(255, 192, 203), (0, 0, 0), (255, 255, 255), (12, 200, 90), (128, 128, 128)]:
        expected = rgb2lab(np.array([[rgb]], float) / 255.0)[0, 0]
        assert np.allclose(rgb_to_lab(rgb), expected, atol=0.02)


def test_table_is_read_lazily() -> None:
    code = (
        "import costa.colours as c; print(c.load_colour_table.cache_info().currsize);"
        "c.parse_colour('pink'); print(c.load_colour_table.cache_info().currsize)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["0", "1"]


def test_malformed_table_is_reported_with_row(tmp_path: Path) -> None:
    bad = tmp_path / "colours.csv"
    bad.write_text("name,r,g,b\npink,255,192,203\nmud,300,0,0\n", encoding="utf-8")
    with pytest.raises(TableError, match=r"colours.csv:3"):
        load_colour_table(bad)
    dup = tmp_path / "dup.csv"
    dup.write_text("name,r,g,b\npink,1,2,3\nPink,1,2,3\n", encoding="utf-8")
    with pytest.raises(TableError, match="duplicate"):
        load_colour_table(dup)
    with pytest.raises(TableError, match="cannot read"):
        load_colour_table(tmp_path / "missing.csv")
