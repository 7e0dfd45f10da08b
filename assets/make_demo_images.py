"""Regenerate the demo images the app offers as one-click examples (deterministic; run from the repo root).

python assets/make_demo_images.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

HERE = Path(__file__).resolve().parent
DEJAVU = Path("/usr/share/fonts/truetype/dejavu")


def font(size: int, bold: bool = True) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    path = DEJAVU / ("DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf")
    return ImageFont.truetype(str(path), size) if path.exists() else ImageFont.load_default(size=size)


def wall(width: int, height: int, top: tuple[int, int, int], bottom: tuple[int, int, int], seed: int) -> Image.Image:
    """A vertical colour gradient with fine seeded grain, so it looks like a photo rather than a flat fill."""
    t = np.linspace(0.0, 1.0, height)[:, None, None]
    base = (1 - t) * np.asarray(top, float) + t * np.asarray(bottom, float)
    base = np.repeat(base, width, axis=1)
    grain = np.random.default_rng(seed).normal(0.0, 3.0, base.shape)
    return Image.fromarray(np.clip(base + grain, 0, 255).astype(np.uint8))


def sale_sign() -> Image.Image:
    img = wall(640, 400, (196, 184, 168), (150, 138, 122), seed=1)
    d = ImageDraw.Draw(img)
    d.rounded_rectangle((110, 90, 530, 310), radius=18, fill=(246, 242, 232), outline=(70, 60, 50), width=6)
    d.text((175, 120), "SALE", font=font(110), fill=(200, 24, 28))
    d.text((196, 250), "everything must go", font=font(26, bold=False), fill=(60, 60, 60))
    return img


def red_ball() -> Image.Image:
    img = wall(640, 420, (208, 222, 236), (120, 132, 120), seed=2)
    d = ImageDraw.Draw(img)
    d.ellipse((300, 268, 460, 300), fill=(92, 100, 92))  # shadow
    d.rectangle((80, 200, 200, 300), fill=(40, 140, 70), outline=(20, 90, 40), width=3)  # a green box
    ball = Image.new("RGB", (160, 160), (0, 0, 0))
    yy, xx = np.mgrid[0:160, 0:160]
    r = np.hypot(xx - 80, yy - 80)
    light = np.clip(1.15 - np.hypot(xx - 55, yy - 50) / 140.0, 0.35, 1.0)
    rgb = np.stack([205 * light, 28 * light, 30 * light], axis=-1)
    ball = Image.fromarray(rgb.astype(np.uint8))
    mask = Image.fromarray(((r <= 78) * 255).astype(np.uint8)).filter(ImageFilter.GaussianBlur(1))
    img.paste(ball, (300, 130), mask)
    return img


def cafe_poster() -> Image.Image:
    img = wall(640, 480, (250, 244, 226), (236, 226, 200), seed=3)
    d = ImageDraw.Draw(img)
    d.rectangle((30, 30, 610, 450), outline=(90, 60, 40), width=5)
    d.text((80, 70), "CORNER CAFE", font=font(58), fill=(90, 50, 30))
    d.text((80, 170), "FREE COFFEE", font=font(52), fill=(30, 30, 30))
    d.text((80, 240), "with every cake", font=font(34, bold=False), fill=(60, 60, 60))
    d.text((80, 360), "Call 555-0142", font=font(40), fill=(30, 30, 30))
    return img


def main() -> None:
    for name, make in (("sale_sign.png", sale_sign), ("red_ball.png", red_ball), ("cafe_poster.png", cafe_poster)):
        make().save(HERE / name, optimize=True)
        print(f"wrote {HERE / name}")


if __name__ == "__main__":
    main()
