"""Synthetic scenes for the target-verification tests: a red disc beside a reddish saucer, a thin shiny spoon.

Each returns the image (RGB uint8) and the bool masks of its objects, seeded, so the tests can say which pixels must
change and which must not.
"""

from __future__ import annotations

import numpy as np


def disc_and_saucer(seed: int = 0, size: tuple[int, int] = (320, 240)) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A textured beige table with a red disc (a circle) on the left and a wide reddish-brown saucer (an ellipse seen
    in perspective, with a lighter rim) on the right. Returns (image, disc mask, saucer mask)."""
    import cv2

    w, h = size
    rng = np.random.default_rng(seed)
    image = np.empty((h, w, 3), np.float32)
    image[:] = (214, 200, 172)
    image += rng.normal(0, 4, (h, w, 1)).astype(np.float32)
    disc = np.zeros((h, w), np.uint8)
    cv2.circle(disc, (w // 4, h // 2), h // 6, 1, -1)
    saucer = np.zeros((h, w), np.uint8)
    cv2.ellipse(saucer, (3 * w // 4 - 10, h // 2 + 10), (w // 5, h // 12), 0, 0, 360, 1, -1)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    shade = 1.0 - 0.25 * (xx - w / 4) / w - 0.2 * (yy - h / 2) / h  # soft light from the top left
    image[disc > 0] = np.array([205, 32, 38], np.float32) * shade[disc > 0, None]
    image[saucer > 0] = np.array([176, 62, 52], np.float32) * (0.9 + 0.1 * shade[saucer > 0, None])
    image = np.clip(cv2.GaussianBlur(image, (0, 0), 0.8), 0, 255).astype(np.uint8)
    return image, disc.astype(bool), saucer.astype(bool)


def shiny_spoon(seed: int = 0, size: tuple[int, int] = (320, 240)) -> tuple[np.ndarray, np.ndarray, tuple[int, int]]:
    """A thin metal spoon (a 7-px handle and a small bowl) on a dark cloth, its steel full of fine specular glints,
    so a flood fill from a click on it stays within a pixel or two. Returns (image, spoon mask, a click on it)."""
    import cv2

    w, h = size
    rng = np.random.default_rng(seed)
    image = np.empty((h, w, 3), np.float32)
    image[:] = (52, 60, 78)
    image += rng.normal(0, 3, (h, w, 1)).astype(np.float32)
    spoon = np.zeros((h, w), np.uint8)
    cv2.line(spoon, (40, h // 2), (w - 110, h // 2 - 12), 1, 7)
    cv2.ellipse(spoon, (w - 80, h // 2 - 14), (34, 18), -5, 0, 360, 1, -1)
    inside = spoon > 0
    glints = rng.uniform(120, 250, (h, w)).astype(np.float32)
    image[inside] = glints[inside, None] * np.array([0.95, 0.97, 1.0], np.float32)
    return np.clip(image, 0, 255).astype(np.uint8), inside, (100, h // 2 - 3)
