"""Campaign conditions: the product of listed values of a turn's options (α, search mode, reflection, threshold).

Example:
    >>> [c.label for c in parse_conditions("alpha=0,2; reflect=on,off")]
    ['alpha=0 · reflect=on', 'alpha=0 · reflect=off', 'alpha=2 · reflect=on', 'alpha=2 · reflect=off']
    >>> parse_conditions("")[0].label
    'default'
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from costa.errors import InputError
from costa.session.turns import MODES

#: Option keys a condition may set, in the order labels list them.
KEYS = ("alpha", "mode", "reflect", "threshold")
ON, OFF = frozenset({"on", "true", "yes", "1"}), frozenset({"off", "false", "no", "0"})


@dataclass(frozen=True)
class Condition:
    """One combination of options; None keeps the settings' default for that option."""

    alpha: float | None = None
    mode: str | None = None
    reflect: bool | None = None
    threshold: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """The options this condition sets (JSON-ready: `reflect` as true/false)."""
        return {k: getattr(self, k) for k in KEYS if getattr(self, k) is not None}

    @property
    def label(self) -> str:
        """Short human label, e.g. "alpha=0 · mode=lazy" ("default" when it sets nothing)."""
        parts = []
        for k, v in self.as_dict().items():
            text = ("on" if v else "off") if k == "reflect" else f"{v:g}" if isinstance(v, float) else str(v)
            parts.append(f"{k}={text}")
        return " · ".join(parts) or "default"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Condition:
        unknown = sorted(set(data) - set(KEYS))
        if unknown:
            raise InputError(f"unknown condition key(s) {unknown}: use {', '.join(KEYS)}")
        return cls(**{k: _value(k, str(data[k]).lower() if isinstance(data[k], bool) else data[k]) for k in data})


def _value(key: str, raw: Any) -> Any:
    text = str(raw).strip().lower()
    if key in ("alpha", "threshold"):
        hi = 2.0 if key == "alpha" else 1.0
        try:
            x = float(text)
        except ValueError:
            x = math.nan
        if not math.isfinite(x) or not 0.0 <= x <= hi:
            raise InputError(f"condition {key}={raw!r}: {key} must be a number in [0, {hi:g}]")
        return x
    if key == "mode":
        if text not in MODES:
            raise InputError(f"condition mode={raw!r}: mode must be one of {', '.join(MODES)}")
        return text
    if text in ON:
        return True
    if text in OFF:
        return False
    raise InputError(f"condition reflect={raw!r}: reflect must be on or off")


def parse_conditions(text: str | None) -> tuple[Condition, ...]:
    """`"alpha=0,1,2; mode=lazy,fast-slow; reflect=on,off"` → every combination, in the listed order.

    Raises:
        InputError: an unknown key, a key given twice, a value out of range or repeated, or an empty list.
    """
    lists: dict[str, list[Any]] = {}
    for part in (text or "").split(";"):
        if not part.strip():
            continue
        key, sep, values = part.partition("=")
        key = key.strip().lower()
        if not sep or key not in KEYS:
            raise InputError(f"condition {part.strip()!r}: expected KEY=v1,v2 with KEY one of {', '.join(KEYS)}")
        if key in lists:
            raise InputError(f"condition key {key} is given twice")
        parsed = [_value(key, v) for v in values.split(",") if v.strip()]
        if not parsed:
            raise InputError(f"condition {key}= lists no value")
        if len(set(parsed)) != len(parsed):
            raise InputError(f"condition {key} lists a value twice: {values.strip()!r}")
        lists[key] = parsed
    keys = [k for k in KEYS if k in lists]
    return tuple(
        Condition(**dict(zip(keys, combo, strict=True))) for combo in itertools.product(*(lists[k] for k in keys))
    )
