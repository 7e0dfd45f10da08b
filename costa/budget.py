"""The per-turn pixel budget: the largest image one turn edits, scaled to the machine, said in the refusal.

A flat 6300² PNG of 131 KB (under COSTA_MAX_PIXELS) took a 74-s turn on two CPU cores, and two of them filled every
turn slot. The budget is COSTA_TURN_MEGAPIXELS when set; otherwise `PER_CORE_MP` megapixels per CPU core (at least
`MIN_MP`) on the CPU, and COSTA_MAX_PIXELS (no further limit) with a GPU. Whether there is a GPU is asked only for an
image over the CPU budget (it may import torch), once per process.

Example:
    >>> from pathlib import Path
    >>> from costa.config import Settings
    >>> b = turn_budget(Settings(home=Path("."), turn_megapixels=2.0))
    >>> b.pixels, b.why
    (2000000, 'COSTA_TURN_MEGAPIXELS=2')
    >>> check_turn_pixels(b, 1000, 1000)
    >>> check_turn_pixels(b, 3000, 1000)
    Traceback (most recent call last):
    ...
    costa.errors.QuotaError: the image is 3000x1000 = 3.0 megapixels; a turn here edits at most 2.0 megapixels \
(COSTA_TURN_MEGAPIXELS=2): nothing was stored; send a smaller or cropped image
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

from costa.config import Settings
from costa.errors import QuotaError

#: Megapixels a turn may edit per CPU core without a GPU.
PER_CORE_MP = 8.0
#: The CPU budget never goes below this many megapixels.
MIN_MP = 8.0


@dataclass(frozen=True)
class TurnBudget:
    """The most pixels one turn edits and why (the setting or the machine), for the refusal."""

    pixels: int
    why: str


def cpu_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@functools.cache
def _has_gpu(prefer: str | None) -> bool:
    from costa.models.device import probe_device

    return probe_device(prefer).is_gpu


def turn_budget(settings: Settings, pixels: int = 0) -> TurnBudget:
    """The budget for a turn on an image of `pixels` (the GPU is looked for only when the CPU budget is passed)."""
    if settings.turn_megapixels is not None:
        mp = settings.turn_megapixels
        return TurnBudget(int(mp * 1e6), f"COSTA_TURN_MEGAPIXELS={mp:g}")
    cores = cpu_cores()
    cpu = TurnBudget(int(max(MIN_MP, PER_CORE_MP * cores) * 1e6), f"{PER_CORE_MP:g} per CPU core on {cores}, no GPU; "
                     "COSTA_TURN_MEGAPIXELS sets it")  # fmt: skip
    if pixels <= cpu.pixels or not _has_gpu(settings.device):
        return cpu
    return TurnBudget(settings.max_pixels, "a GPU: COSTA_MAX_PIXELS")


def check_turn_pixels(budget: TurnBudget, width: int, height: int) -> None:
    """Refuse a turn on a `width` × `height` image over `budget`, naming both.

    Raises:
        QuotaError: the image has more pixels than the budget.
    """
    if width * height > budget.pixels:
        raise QuotaError(
            f"the image is {width}x{height} = {_mp(width * height)} megapixels; a turn here edits at most "
            f"{_mp(budget.pixels)} megapixels ({budget.why}): nothing was stored; send a smaller or cropped image"
        )


def _mp(pixels: int) -> str:
    """Megapixels to one decimal (two significant digits below one: 0.02, never 0.0)."""
    mp = pixels / 1e6
    return f"{mp:.1f}" if mp >= 1 else f"{mp:.2g}"
