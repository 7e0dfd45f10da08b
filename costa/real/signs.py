"""Real signs for the text-replacement cases (suite kind "retext", issue 18 items 1 and 7).

`tests/data/real/signs.yaml` holds, for each real photo of a sign, every word on it with its box in pixels (measured
by hand on enlarged crops and checked by drawing it) and the sign's panel (a box, or a polygon where the sign is
tilted or cut by the photo's edge), plus the replacements asked. This module reads them, makes the case definitions
("change the word 'ROAD' to 'PATH'", with and without a box around the word) and measures glyphs — their ink, height
and stroke width — for the judge in `costa.real.measures.judge_retext`. It imports nothing of `costa.real.cases`
(which imports it).

    >>> grow_box((10, 20, 30, 8), 3, (100, 100))
    (7, 17, 36, 14)
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import yaml

from costa.real.photos import DATA_DIR, photo

SIGNS_FILE = DATA_DIR / "signs.yaml"
Box = tuple[int, int, int, int]  # x, y, w, h
#: The phrasings of a replacement: (instruction, which new word — the "similar" or the "other" length —, pointing).
FORMS: tuple[tuple[str, str, str], ...] = (
    ("change the word '{old}' to '{new}'", "similar", "none"),
    ("replace '{old}' with '{new}'", "other", "none"),
    ("replace '{old}' with '{new}'", "similar", "box"),
    ("change the text '{old}' to '{new}'", "other", "box"),
)
#: The user's box around the word: its ink box grown by this many pixels on every side.
POINT_MARGIN = 4


@dataclass(frozen=True)
class Word:
    """A word on a sign and its ink box (x, y, w, h) in the photo's pixels at `costa.real.photos.SIDE`."""

    text: str
    box: Box


@dataclass(frozen=True)
class Sign:
    """A real sign: its photo, the panel polygon its text is printed on, its words and the replacements asked
    (old, similar, other)."""

    photo: str
    panel: tuple[tuple[int, int], ...]
    words: tuple[Word, ...]
    edits: tuple[tuple[str, str, str], ...]

    def word(self, text: str) -> Word:
        for w in self.words:
            if w.text == text:
                return w
        raise KeyError(f"signs.yaml: no word {text!r} on the sign of {self.photo}")


def _panel(value: Any, where: str) -> tuple[tuple[int, int], ...]:
    if len(value) == 4 and all(isinstance(v, int) for v in value):
        x, y, w, h = value
        return ((x, y), (x + w - 1, y), (x + w - 1, y + h - 1), (x, y + h - 1))
    if len(value) >= 3 and all(len(p) == 2 for p in value):
        return tuple((int(p[0]), int(p[1])) for p in value)
    raise ValueError(f"signs.yaml: {where}: panel {value!r} is neither [x, y, w, h] nor a polygon [[x, y], ...]")


@functools.lru_cache(maxsize=1)
def load_signs() -> tuple[Sign, ...]:
    """Every transcribed sign, in the file's order.

    Raises:
        ValueError: a row names a photo not in photos.yaml, a malformed panel or box, or an edit of a word not on it.
    """
    doc = yaml.safe_load(SIGNS_FILE.read_text(encoding="utf-8"))
    out = []
    for row in doc["signs"]:
        pid = str(row["photo"])
        photo(pid)  # raises KeyError for a photo the suite does not know
        words = []
        for w in row["words"]:
            box = tuple(int(v) for v in w["box"])
            if len(box) != 4 or box[2] <= 0 or box[3] <= 0:
                raise ValueError(f"signs.yaml: {pid}: word {w['text']!r} has box {w['box']!r}; expected [x, y, w, h]")
            words.append(Word(str(w["text"]), (box[0], box[1], box[2], box[3])))
        edits = tuple((str(e["old"]), str(e["similar"]), str(e["other"])) for e in row["edits"])
        sign = Sign(pid, _panel(row["panel"], pid), tuple(words), edits)
        for old, _, _ in edits:
            sign.word(old)
        out.append(sign)
    return tuple(out)


def sign_for(photo_id: str) -> Sign:
    for s in load_signs():
        if s.photo == photo_id:
            return s
    raise KeyError(f"signs.yaml: no sign on photo {photo_id!r}")


def retext_definitions(part: str) -> list[dict[str, Any]]:
    """The retext cases' definitions of `part`: every form of `FORMS` for every asked replacement (fields of
    `costa.real.cases.RealCase`)."""
    out = []
    for sign in load_signs():
        if photo(sign.photo).part != part:
            continue
        for old, similar, other in sign.edits:
            for j, (text, which, pointing) in enumerate(FORMS):
                new = similar if which == "similar" else other
                out.append({
                    "id": f"{part}-retext-{sign.photo}-{_slug(old)}-{j}", "kind": "retext", "part": part,
                    "photo": sign.photo, "instruction": text.format(old=old, new=new), "pointing": pointing,
                    "params": {"old": old, "new": new, "length": which},
                })  # fmt: skip
    return out


def _slug(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


# -------------------------------------------------------------------------------------------------- geometry


def grow_box(box: Box, px: int, shape: tuple[int, int]) -> Box:
    """`box` grown by `px` on every side, clipped to an image of `shape` (height, width)."""
    x, y, w, h = box
    x0, y0 = max(0, x - px), max(0, y - px)
    x1, y1 = min(shape[1], x + w + px), min(shape[0], y + h + px)
    return (x0, y0, x1 - x0, y1 - y0)


def box_mask(box: Box, shape: tuple[int, int]) -> np.ndarray:
    x, y, w, h = box
    m = np.zeros(shape, bool)
    m[max(0, y) : max(0, y + h), max(0, x) : max(0, x + w)] = True
    return m


def panel_mask(sign: Sign, shape: tuple[int, int]) -> np.ndarray:
    """The sign's panel as a bool mask of `shape` (its polygon filled, edges included)."""
    import cv2

    m = np.zeros(shape, np.uint8)
    pts = np.asarray(sign.panel, np.int32)
    cv2.fillPoly(m, [pts], 1)
    cv2.polylines(m, [pts], True, 1)
    return m.astype(bool)


def changed(before: np.ndarray, after: np.ndarray, level: int) -> np.ndarray:
    """Pixels where some channel moved by more than `level` grey levels."""
    return np.asarray(np.abs(after.astype(np.int16) - before.astype(np.int16)).max(axis=2) > level)


def ink_threshold(image: np.ndarray, box: np.ndarray, ring: np.ndarray) -> tuple[np.ndarray, float]:
    """The panel's colour around a word (median of `ring`) and the colour distance that separates the word's ink
    from it (Otsu's threshold on the distances inside `box`, at least 40)."""
    from skimage.filters import threshold_otsu

    background = np.median(image[ring].reshape(-1, 3).astype(np.float64), axis=0)
    dist = _distance(image, background)[box]
    level = float(threshold_otsu(dist)) if dist.size and np.ptp(dist) > 0 else 40.0
    return background, max(40.0, level)


def ink(image: np.ndarray, region: np.ndarray, background: np.ndarray, level: float) -> np.ndarray:
    """The ink pixels of `region`: farther than `level` from the panel's colour `background`."""
    return np.asarray((_distance(image, background) > level) & region)


def _distance(image: np.ndarray, background: np.ndarray) -> np.ndarray:
    return np.asarray(np.sqrt(((image.astype(np.float64) - background) ** 2).sum(axis=2)))


def ink_height(mask: np.ndarray) -> float:
    """The glyphs' height in pixels: the span of the ink's rows from its 0.5th to its 99.5th percentile (a stray
    speck does not count); 0 for no ink."""
    ys = np.nonzero(mask)[0]
    if ys.size < 4:
        return 0.0
    lo, hi = np.percentile(ys, [0.5, 99.5])
    return float(hi - lo + 1)


def stroke_width(mask: np.ndarray) -> float:
    """The glyphs' weight: twice the median distance from the ink's skeleton to its edge, in pixels (0 for none)."""
    import cv2
    from skimage.morphology import skeletonize

    if mask.sum() < 4:
        return 0.0
    dist = cv2.distanceTransform(np.pad(mask, 1).astype(np.uint8), cv2.DIST_L2, 5)[1:-1, 1:-1]
    skel = skeletonize(mask)
    return float(2 * np.median(dist[skel])) if skel.any() else 0.0


def normalise(text: str) -> str:
    """Letters and digits only, upper case: how a read text and an asked word are compared."""
    return "".join(ch for ch in text.upper() if ch.isalnum())


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance.

    >>> edit_distance("KAPOWUI", "KAPOWUX"), edit_distance("GO", "GO")
    (1, 0)
    """
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


@functools.lru_cache(maxsize=1)
def _reader() -> Any:
    from costa.tools.ocr import RapidOcrReader

    return RapidOcrReader(box_thresh=0.3, text_score=0.3)


def read_words(image: np.ndarray, box: Box) -> list[str]:
    """What RapidOCR reads in `box` of `image` (at its own size), line by line."""
    x, y, w, h = box
    crop = np.ascontiguousarray(image[y : y + h, x : x + w])
    return [r.text for r in _reader().read(crop, upscale=1.0)]


def reads_as(lines: list[str], word: str) -> bool:
    """Whether `word` is among `lines` read: as a substring of a line (letters and digits), or for words of five or
    more characters as a token one edit away."""
    want = normalise(word)
    if not want:
        return False
    for line in lines:
        if want in normalise(line):
            return True
        if len(want) >= 5 and any(edit_distance(normalise(t), want) <= 1 for t in line.split()):
            return True
    return False
