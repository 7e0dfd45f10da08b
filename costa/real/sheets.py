"""Contact sheets for the real-photo suite: before | result | truth, the judged region outlined, a caption.

What `bench real --save DIR` writes, so the right/wrong measures can be checked (and their thresholds set) by
looking at the images.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_HEIGHT = 256


def _fit(image: np.ndarray | None, height: int = _HEIGHT) -> np.ndarray:
    import cv2

    if image is None:
        return np.full((height, height, 3), 40, np.uint8)
    h, w = image.shape[:2]
    return cv2.resize(image, (max(1, round(w * height / h)), height), interpolation=cv2.INTER_AREA)


def _outline(image: np.ndarray, mask: np.ndarray | None, offset: tuple[int, int] = (0, 0)) -> np.ndarray:
    import cv2

    out = np.ascontiguousarray(image.copy())
    if mask is None or not mask.any():
        return out
    full: np.ndarray = np.zeros((out.shape[0], out.shape[1]), np.uint8)
    x, y = offset
    h, w = min(mask.shape[0], full.shape[0] - y), min(mask.shape[1], full.shape[1] - x)
    full[y : y + h, x : x + w] = mask[:h, :w]
    contours = cv2.findContours(full, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)[0]
    cv2.drawContours(out, contours, -1, (255, 0, 255), max(1, out.shape[0] // 200))
    return out


def contact_sheet(step: str, truth: Any, before: np.ndarray, after: np.ndarray | None, caption: str) -> np.ndarray:
    """One RGB sheet: before | result | truth at 256 px high, the truth's region outlined in magenta on each, and
    `caption` above."""
    if step == "retext" and truth.sign is not None:
        return _bar(_retext_tiles(truth, before, after), caption)
    region: np.ndarray | None = truth.mask
    truth_image = {
        "removal": truth.background,
        "outpaint": truth.canvas,
        "deblur": truth.sharp,
    }.get(step)
    if (
        step in ("background", "recolour") and truth.mask is not None
    ):  # the object alone (recolour: in the asked colour)
        fill = np.array(truth.rgb if step == "recolour" and truth.rgb is not None else (255, 255, 255), np.uint8)
        truth_image = np.where(truth.mask[..., None], before if step == "background" else fill, 255).astype(np.uint8)
    offset = (0, 0)
    if step == "outpaint" and truth.canvas is not None:
        region = np.ones(before.shape[:2], np.uint8)  # the input's place on the canvas
        offset = truth.offset
    tiles = []
    for image, off in ((before, (0, 0)), (after, offset), (truth_image, offset)):
        if image is None:
            tiles.append(_fit(None))
            continue
        marked = _outline(image, None if region is None else region.astype(np.uint8), off)
        tiles.append(_fit(marked))
    return _bar(np.concatenate(tiles, axis=1), caption)


def _retext_tiles(truth: Any, before: np.ndarray, after: np.ndarray | None) -> np.ndarray:
    """before | result with the hand truth drawn (panel green, old word magenta, other words cyan) | the result's
    panel enlarged, undrawn, to read the new word."""
    import cv2

    sign = truth.sign
    pts = np.asarray(sign.panel, np.int32)

    def drawn(image: np.ndarray) -> np.ndarray:
        out = np.ascontiguousarray(image.copy())
        cv2.polylines(out, [pts], True, (0, 200, 0), 1)
        for w in sign.words:
            x, y, bw, bh = w.box
            colour = (255, 0, 255) if w.text == truth.old else (0, 200, 255)
            cv2.rectangle(out, (x, y), (x + bw - 1, y + bh - 1), colour, 1)
        return out

    x0, y0 = max(0, int(pts[:, 0].min()) - 4), max(0, int(pts[:, 1].min()) - 4)
    x1, y1 = int(pts[:, 0].max()) + 5, int(pts[:, 1].max()) + 5
    zoom = None if after is None else np.ascontiguousarray(after[y0:y1, x0:x1])
    return np.concatenate([_fit(drawn(before)), _fit(None if after is None else drawn(after)), _fit(zoom)], axis=1)


def _bar(body: np.ndarray, caption: str) -> np.ndarray:
    import cv2

    bar = np.full((22, body.shape[1], 3), 255, np.uint8)
    text = caption.replace("Δ", "d").replace("°", " deg").replace("×", "x").encode("ascii", "replace").decode()
    cv2.putText(bar, text[:150], (4, 16), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (0, 0, 0), 1, cv2.LINE_AA)
    return np.concatenate([bar, body], axis=0)
