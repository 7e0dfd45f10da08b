"""FAKE uploads: files users upload by mistake or in malice, written to disk: corrupt, truncated, decompression bomb,
animated, CMYK, 16-bit, EXIF-rotated (for the app tests and `python -m costa bench faults`)."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
from PIL import Image


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def bomb_png(path: Path, width: int = 50_000, height: int = 50_000) -> Path:
    """A tiny file whose header claims width × height RGB pixels (nothing that large is ever allocated)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    data = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(b"\x00" * 64))
    path.write_bytes(data + _chunk(b"IEND", b""))
    return path


def corrupt_png(path: Path) -> Path:
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + b"this is not image data at all" * 20)
    return path


def truncated_png(path: Path) -> Path:
    full = path.with_name(path.stem + "-full.png")
    rng = np.random.default_rng(0)
    Image.fromarray(rng.integers(0, 255, (120, 160, 3), dtype=np.uint8)).save(full)
    data = full.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


def animated_gif(path: Path) -> Path:
    frames = [Image.new("RGB", (64, 48), c) for c in ((200, 30, 30), (30, 200, 30), (30, 30, 200))]
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=100, loop=0)
    return path


def cmyk_jpeg(path: Path) -> Path:
    Image.new("CMYK", (64, 48), (0, 200, 200, 0)).save(path, "JPEG")
    return path


def png16(path: Path) -> Path:
    ramp = (np.linspace(0, 65535, 64 * 48).reshape(48, 64)).astype(np.uint16)
    Image.fromarray(ramp, "I;16").save(path)
    return path


def exif_rotated_jpeg(path: Path) -> Path:
    """A 64 × 48 JPEG whose EXIF orientation says "rotate 90°" (viewers show it 48 × 64)."""
    img = Image.new("RGB", (64, 48), (200, 120, 40))
    exif = Image.Exif()
    exif[0x0112] = 6  # orientation: rotate 90° clockwise to display
    img.save(path, "JPEG", exif=exif.tobytes())
    return path


#: Every hostile file: (name, writer, accepted?) — accepted files are edited with a note, the others refused.
HOSTILE = (
    ("corrupt.png", corrupt_png, False),
    ("truncated.png", truncated_png, False),
    ("bomb.png", bomb_png, False),
    ("animated.gif", animated_gif, True),
    ("cmyk.jpg", cmyk_jpeg, True),
    ("deep.png", png16, True),
    ("rotated.jpg", exif_rotated_jpeg, True),
)
