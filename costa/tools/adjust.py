"""Global adjustments: brightness, contrast, saturation, warmth, black and white, sepia.

`parse_adjustment` reads what to do from the subtask's `result` — the planner's words ("brighter", "less
saturated", "warmer", "more contrast", "grayscale", "sepia") with an optional degree ("slightly", "much", "by 30%")
— and how much from the `amount` parameter when a plan sets it. The adjustment check uses the same parser, so the
tool and its check agree on what was asked.

`GlobalAdjuster` works in ways that cannot clip by themselves: brighter by a gamma curve on luma, darker by scaling luma
down (an exposure change), each pixel keeping its colour offset from grey as far as the gamut allows (a per-channel
curve barely darkens a saturated red, whose strong channel moves little, while it crushes the weak ones to 0), more
contrast by stretching luma about the image's mean with soft shoulders, less contrast by pulling luma toward its mean,
saturation by scaling CIELAB chroma, warmth by shifting CIELAB b* (and a little a*). A subtask with a target acts only
inside the user's region (see `costa.tools.region`). Milliseconds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from costa.errors import ToolError
from costa.imagestats import luma
from costa.tools.base import Tool
from costa.tools.params import float_param
from costa.tools.region import feathered, target_region
from costa.types import EditState, Subtask, ToolOutput

Quantity = Literal["brightness", "contrast", "saturation", "warmth", "grayscale", "sepia"]

#: Amount when the words give no degree (0–1; see `GlobalAdjuster` for what 1 means per quantity).
DEFAULT_AMOUNT = 0.25
_DEGREES = (
    (re.compile(r"\b(?:slightly|a\s+(?:little\s+)?bit|a\s+little|somewhat|a\s+touch|subtly|mildly|gently)\b"), 0.5),
    (re.compile(r"\b(?:much|a\s+lot|way|very|significantly|considerably|strongly|far|even|dramatically)\b"), 1.8),
)
_PERCENT = re.compile(r"(?:by\s+)?(\d+(?:\.\d+)?)\s*%")
_WORDS: tuple[tuple[re.Pattern[str], Quantity, int], ...] = (
    (re.compile(r"\b(?:grayscale|greyscale|black[\s-]*(?:and|&)[\s-]*white|monochrome|b\s*&\s*w)\b"), "grayscale", 1),
    (re.compile(r"\bsepia\b"), "sepia", 1),
    (re.compile(r"\b(?:less|lower|reduced?|decreased?|low)\s+contrast|\bflatter\b"), "contrast", -1),
    (
        re.compile(r"\b(?:more|higher|increased?|boost(?:ed)?|high)\s+contrast|\bcontrasty\b|\bpunchier\b"),
        "contrast",
        1,
    ),
    (
        re.compile(
            r"\b(?:less|de-?)\s*(?:saturated|saturation|colou?rful|vivid|vibrant)|\bdesaturated?\b|\bduller\b|"
            r"\bmuted\b|\bwashed[\s-]out\b"
        ),
        "saturation",
        -1,
    ),
    (
        re.compile(r"\b(?:more\s+)?(?:saturated|saturation|colou?rful|vivid|vibrant)\b|\bricher\s+colou?rs?\b"),
        "saturation",
        1,
    ),
    (re.compile(r"\b(?:cooler|colder|cool|cold|bluer)\b"), "warmth", -1),
    (re.compile(r"\b(?:warmer|warm|hotter)\b"), "warmth", 1),
    (re.compile(r"\b(?:darker|dimmer|darken(?:ed)?|dark|dim|less\s+bright|underexposed)\b"), "brightness", -1),
    (re.compile(r"\b(?:brighter|lighter|brighten(?:ed)?|lighten(?:ed)?|bright|more\s+light)\b"), "brightness", 1),
)


@dataclass(frozen=True)
class Adjustment:
    """What to change (`quantity`), which way (`sign` +1 more / −1 less) and how much (`amount`, 0–1)."""

    quantity: Quantity
    sign: int
    amount: float

    def describe(self) -> str:
        if self.quantity in ("grayscale", "sepia"):
            return self.quantity
        words = {
            "brightness": ("brighter", "darker"),
            "contrast": ("more contrast", "less contrast"),
            "saturation": ("more saturated", "less saturated"),
            "warmth": ("warmer", "cooler"),
        }[self.quantity]
        return f"{words[0] if self.sign > 0 else words[1]} (amount {self.amount:.2f})"


def degree_amount(text: str) -> float | None:
    """The amount (0–1) a degree in `text` asks for — "slightly" 0.125, "much" / "even" 0.45, "by 30%" 0.3 — or None
    when it names none (the plain amount). The planner puts it in the subtask's `amount` parameter, so "make the cup a
    little darker" is not planned as plain "darker".

    >>> degree_amount("make the cup a little darker"), degree_amount("brighter by 30%"), degree_amount("warmer")
    (0.125, 0.3, None)
    """
    t = " ".join(text.lower().split())
    if m := _PERCENT.search(t):
        return float(m.group(1)) / 100.0
    for degree, factor in _DEGREES:
        if degree.search(t):
            return DEFAULT_AMOUNT * factor
    return None


def parse_adjustment(result: str | None, params: Mapping[str, Any] | None = None) -> Adjustment:
    """Read the adjustment a subtask asks for; `params["amount"]` (0–1, > 0) overrides the words' degree.

    Raises:
        ToolError: no known adjustment word in `result`, or an amount outside (0, 1].
    """
    text = " ".join((result or "").lower().split())
    found = next(((q, s) for pattern, q, s in _WORDS if pattern.search(text)), None)
    if found is None:
        raise ToolError(
            f"cannot tell which adjustment {result!r} asks for (say brighter, darker, more or less contrast, more or "
            "less saturated, warmer, cooler, black and white or sepia)"
        )
    quantity, sign = found
    amount = degree_amount(text) or DEFAULT_AMOUNT
    raw = (params or {}).get("amount", 0) or 0
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise ToolError(f"the adjustment amount must be a number in (0, 1], got {raw!r}")
    if raw:
        amount = float(raw)
    if not 0.0 < amount <= 1.0:
        raise ToolError(f"the adjustment amount must be in (0, 1], got {amount:g}")
    return Adjustment(quantity, sign, amount)


def _lab(image: np.ndarray) -> np.ndarray:
    import cv2

    return cv2.cvtColor(image.astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)


def _rgb(lab: np.ndarray) -> np.ndarray:
    import cv2

    rgb = cv2.cvtColor(lab.astype(np.float32), cv2.COLOR_Lab2RGB)
    return np.clip(rgb * 255.0, 0.0, 255.0)


# Channel values adjustments aim inside of, so rounding never lands a pixel on 0 or 255 that was not there before.
_BOTTOM, _TOP = 1.0, 254.0


def _with_luma(image: np.ndarray, new_luma: np.ndarray) -> np.ndarray:
    """Give each pixel the new luma and keep its colour offset from grey, shrunk only as far as the gamut needs:
    a saturated colour moved toward white loses some chroma instead of piling up at 255."""
    rgb = image.astype(np.float32)
    y = luma(image)[..., None]
    target = np.clip(new_luma, 0.0, 255.0)[..., None]
    diff = rgb - y
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(diff > 0, (_TOP - target) / diff, np.where(diff < 0, (_BOTTOM - target) / diff, np.inf))
    keep = np.clip(room.min(axis=2, keepdims=True), 0.0, 1.0)
    return np.clip(target + diff * keep, 0.0, 255.0)


#: Darker by amount a scales luma by (1 + 2a) to this power: plain (0.25) × 0.67, "slightly" × 0.8, "much" × 0.53
#: (a mid grey drops about as far as under the gamma curve 1 + 2a it replaces; a white thing now drops too).
_DARKER_EXPONENT = 1.0


def _scale_colour(image: np.ndarray, factor: float) -> np.ndarray:
    """Scale each pixel's colour away from (factor > 1) or toward (< 1) its grey of equal luma, never past 0 or 255:
    a pixel that would clip is scaled only as far as its gamut allows."""
    rgb = image.astype(np.float32)
    y = luma(image)[..., None]
    diff = rgb - y
    factor_px: np.ndarray | np.floating[Any]
    if factor > 1.0:
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where(diff > 0, (_TOP - y) / diff, np.where(diff < 0, (_BOTTOM - y) / diff, np.inf))
        room = np.maximum(room.min(axis=2, keepdims=True), 1.0)  # the factor that would reach 1 or 254
        # Soft knee: up to 80 % of the room the factor is as asked; beyond, it approaches 98 % of the room and never
        # reaches it, so saturated colours keep their gradations instead of piling up on the gamut's edge.
        with np.errstate(invalid="ignore"):  # a grey pixel has unlimited room (inf); it takes the factor as asked
            share = factor / room
            knee = np.where(share <= 0.8, share, 0.8 + 0.18 * (1.0 - np.exp(-(share - 0.8) / 0.18)))
            limited = np.where(np.isfinite(room), room * knee, factor)
        factor_px = np.maximum(1.0, np.minimum(factor, limited))
    else:
        factor_px = np.float32(factor)
    return np.clip(y + diff * factor_px, 0.0, 255.0)


def _stretch(y: np.ndarray, pivot: float, gain: float) -> np.ndarray:
    """Stretch luma (0–1) away from `pivot` by `gain`, rolling off smoothly in the outer fifth of each side so the
    result approaches but never reaches 0 or 1: more contrast without piling shadows and highlights up at the ends."""
    v = pivot + (y - pivot) * gain
    hi, lo = pivot + 0.8 * (1.0 - pivot), 0.2 * pivot
    top = hi + (1.0 - hi) * (1.0 - np.exp(-(v - hi) / (1.0 - hi)))
    bottom = lo - lo * (1.0 - np.exp(-(lo - v) / lo))
    return np.where(v > hi, top, np.where(v < lo, bottom, v))


def _warm(image: np.ndarray, sign: int, strength: float) -> np.ndarray:
    """Warm (sign +1: red toward 255, blue toward 0) or cool (−1: the reverse) by `strength` of the way, so no channel
    can clip."""
    rgb = image.astype(np.float32)
    hot, cold = (0, 2) if sign > 0 else (2, 0)
    rgb[..., hot] += (255.0 - rgb[..., hot]) * strength
    rgb[..., cold] *= 1.0 - strength
    return rgb


def adjust(image: np.ndarray, adj: Adjustment, region: np.ndarray | None = None) -> np.ndarray:
    """Apply `adj` to an RGB uint8 image and return float32 RGB in 0–255 (statistics over `region` when given).

    What amount 1 means: brightness — luma gamma 1/3 (brighter) or luma ÷ 3 (darker); contrast — luma
    stretched × 2.6 about its mean with soft shoulders (more) or all luma pulled to the mean (less); saturation — colour
    × 3 within the gamut (more) or grey (less); warmth — red and blue moved 60 % of the way to 255 / 0 (reversed for
    cooler).
    """
    a = adj.amount
    where = region if region is not None else np.ones(image.shape[:2], dtype=bool)
    if adj.quantity == "brightness":
        y = luma(image)
        if adj.sign > 0:
            return _with_luma(image, 255.0 * (y / 255.0) ** (1.0 / (1.0 + 2.0 * a)))
        # Darker: luma scaled down, like a shorter exposure — every tone by the same factor, so a shadow keeps its
        # gradations (a gamma curve crushed them to black) and a white thing turns grey (a gamma curve keeps white at
        # white, so "make the white disc darker" moved it by 2 L*).
        return _with_luma(image, y * (1.0 + 2.0 * a) ** -_DARKER_EXPONENT)
    if adj.quantity == "contrast":
        y = luma(image) / 255.0
        pivot = float(np.clip(y[where].mean(), 0.05, 0.95))
        gain = 1.0 + 1.6 * a
        # More contrast: never darker than the luma ÷ the gain, so deep shadows keep their gradations (the stretch's
        # lower shoulder alone runs them into black on a dark photo).
        new = np.maximum(_stretch(y, pivot, gain), y / gain) if adj.sign > 0 else pivot + (y - pivot) * (1.0 - a)
        return _with_luma(image, (new * 255.0).astype(np.float32))
    if adj.quantity == "saturation":
        return _scale_colour(image, 1.0 + 2.0 * a if adj.sign > 0 else 1.0 - a)
    if adj.quantity == "warmth":
        return _warm(image, adj.sign, 0.6 * a)
    if adj.quantity == "grayscale":
        return _scale_colour(image, 0.0)
    # Sepia: a warm brown tint over the grey image, strongest in the mid-tones (shadows and highlights stay neutral,
    # as in toned prints, and nothing is pushed out of gamut).
    lab = _lab(np.rint(_scale_colour(image, 0.0)).astype(np.uint8))
    lightness = lab[..., 0]
    tone = np.clip(lightness / 40.0, 0.0, 1.0) * np.clip((100.0 - lightness) / 25.0, 0.0, 1.0)
    lab[..., 1] = 7.0 * tone
    lab[..., 2] = 22.0 * tone
    return _rgb(lab)


class GlobalAdjuster(Tool):
    """Brightness, contrast, saturation and warmth changes, black and white, sepia (`global_adjust`).

    Params:
        amount: strength in (0, 1]; 0 takes it from the words ("slightly" 0.125, plain 0.25, "much" 0.45, "by 30%").
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        # `amount` may come from a plan, not only from the table: a bad value is the request's fault (ToolError).
        adj = parse_adjustment(subtask.result, {"amount": float_param(params, "amount")})
        region = target_region(state, subtask, "adjust")
        adjusted = adjust(state.image, adj, region)
        if region is None:
            out = np.rint(adjusted).astype(np.uint8)
            edited = np.ones((state.height, state.width), dtype=bool)
        else:
            weight = feathered(region, 3.0)[..., None]
            base = state.image.astype(np.float32)
            out = np.clip(np.rint(base + weight * (adjusted - base)), 0, 255).astype(np.uint8)
            edited = weight[..., 0] > 0
        where = "" if region is None else f" inside {subtask.target!r}"
        return ToolOutput(image=out, edited_region=edited, notes=f"{adj.describe()}{where}")
