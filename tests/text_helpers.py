"""Image and spec builders shared by the text tests: synthetic signs on flat, gradient and noisy backgrounds."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from costa.tools.ocr import RapidOcrReader
from costa.types import Requirements, ToolSpec

_DEJAVU = Path("/usr/share/fonts/truetype/dejavu")


def font(size: int, bold: bool = True) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """DejaVu Sans when installed, else Pillow's built-in scalable font."""
    path = _DEJAVU / ("DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf")
    return ImageFont.truetype(str(path), size) if path.exists() else ImageFont.load_default(size=size)


def background(kind: str, width: int = 420, height: int = 220, colour: Sequence[int] = (238, 236, 228)) -> np.ndarray:
    """An RGB uint8 background: "flat", "gradient" (left-to-right and top-to-bottom shading) or "noise" (seeded
    Gaussian grain of σ≈10 around `colour`)."""
    base = np.ones((height, width, 3), dtype=np.float64) * np.asarray(colour, dtype=np.float64)
    if kind == "gradient":
        xs = np.linspace(-45, 45, width)[None, :, None]
        ys = np.linspace(-25, 25, height)[:, None, None]
        base = base + xs + ys * np.array([1.0, 0.5, -0.5])
    elif kind == "noise":
        base = base + np.random.default_rng(7).normal(0, 10, base.shape)
    elif kind != "flat":
        raise ValueError(kind)
    return np.clip(np.round(base), 0, 255).astype(np.uint8)


@dataclass(frozen=True)
class Line:
    text: str
    xy: tuple[int, int]
    size: int = 32
    colour: tuple[int, int, int] = (20, 20, 20)
    bold: bool = True


def draw(image: np.ndarray, lines: Sequence[Line]) -> np.ndarray:
    pil = Image.fromarray(image)
    d = ImageDraw.Draw(pil)
    for line in lines:
        d.text(line.xy, line.text, font=font(line.size, line.bold), fill=line.colour)
    return np.asarray(pil, dtype=np.uint8).copy()


def sign(kind: str = "flat", colour: tuple[int, int, int] = (200, 20, 20), size: int = 32) -> np.ndarray:
    """The standard test sign: "BIG SALE TODAY" over a phone-number line."""
    img = background(kind)
    return draw(
        img,
        [Line("BIG SALE TODAY", (24, 40), size, colour), Line("Call 555-123-4567", (24, 130), 22, (15, 15, 15), False)],
    )


@functools.cache
def shared_reader() -> RapidOcrReader:
    """One loaded OCR engine for all text test modules (loading costs ~1.5 s; reads are stateless)."""
    reader = RapidOcrReader()
    reader.load()
    return reader


def tool_spec(tool_id: str) -> ToolSpec:
    """The tool's real spec from tool_tables/tools.yaml, so tests run with the table's defaults and retries."""
    return _tables().tools[tool_id]


@functools.cache
def _tables() -> Any:
    from costa.tables import load_tables

    return load_tables()


def hand_spec(tool_id: str, inputs: Sequence[str], outputs: Sequence[str]) -> ToolSpec:
    """A minimal ToolSpec built by hand, for tools exercised outside the tables (no params declared)."""
    return ToolSpec(
        id=tool_id,
        family="text",
        backend="embedded",
        status="ready",
        subtasks=(),
        inputs=tuple(inputs),
        outputs=tuple(outputs),
        requirements=Requirements(),
    )
