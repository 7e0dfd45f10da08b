"""Read and validate one tool parameter from an attempt's parameter mapping.

Parameter values come from tool_tables/tools.yaml (defaults and retry schedules); a value of the wrong type or range
is a table bug, so it raises `InputError` naming the parameter and echoing the value rather than being coerced.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from costa.errors import InputError


def float_param(params: Mapping[str, Any], name: str, default: float, low: float, high: float) -> float:
    """Return `params[name]` (or `default`) as a float in [low, high]; raise `InputError` otherwise."""
    value = params.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"parameter {name!r} must be a finite number, got {value!r}")
    if not low <= float(value) <= high:
        raise InputError(f"parameter {name!r} must be in [{low}, {high}], got {value!r}")
    return float(value)


def int_param(params: Mapping[str, Any], name: str, default: int, low: int, high: int) -> int:
    """Return `params[name]` (or `default`) as an int in [low, high]; raise `InputError` otherwise."""
    value = params.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not float(value).is_integer():
        raise InputError(f"parameter {name!r} must be a whole number, got {value!r}")
    if not low <= int(value) <= high:
        raise InputError(f"parameter {name!r} must be in [{low}, {high}], got {value!r}")
    return int(value)
