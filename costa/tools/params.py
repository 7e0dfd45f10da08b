"""Read one tool parameter from an attempt's parameter mapping.

Every parameter is declared in tool_tables/tools.yaml with its type, default, range and retry schedule; `Tool.__call__`
fills the defaults and checks the declared type and range before `run` sees them (`check_params`), and a plan's values
are checked when the plan is validated. So these readers hold no second default or range: a name that is missing or a
value of the wrong type here is a bug in costa (a parameter read but not declared), and raises `InputError` naming it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from costa.errors import InputError
from costa.types import ParamSpec


def _value(params: Mapping[str, Any], name: str) -> Any:
    try:
        return params[name]
    except KeyError as e:
        raise InputError(
            f"parameter {name!r} is read but not declared in tools.yaml; declared: {sorted(params)}"
        ) from e


def float_param(params: Mapping[str, Any], name: str) -> float:
    """Return `params[name]` as a float."""
    value = _value(params, name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"parameter {name!r} must be a number, got {value!r}")
    return float(value)


def int_param(params: Mapping[str, Any], name: str) -> int:
    """Return `params[name]` as an int."""
    value = _value(params, name)
    if isinstance(value, bool) or not isinstance(value, int | float) or not float(value).is_integer():
        raise InputError(f"parameter {name!r} must be a whole number, got {value!r}")
    return int(value)


def str_param(params: Mapping[str, Any], name: str) -> str:
    """Return `params[name]` as a str."""
    value = _value(params, name)
    if not isinstance(value, str):
        raise InputError(f"parameter {name!r} must be text, got {value!r}")
    return value


def param_problem(spec: ParamSpec, value: Any) -> str | None:
    """Why `value` does not fit the declared parameter `spec` (type, range, choices), or None when it does.

    Example:
        >>> p = ParamSpec("strength", 1.0, type="float", min=0.0, max=1.0)
        >>> param_problem(p, 0.5) is None, param_problem(p, 5)
        (True, 'strength=5 is outside [0.0, 1.0]')
    """
    if spec.type in ("float", "int"):
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            return f"{spec.name}={value!r} is not a finite number"
        if spec.type == "int" and not float(value).is_integer():
            return f"{spec.name}={value!r} is not a whole number"
        if (spec.min is not None and value < spec.min) or (spec.max is not None and value > spec.max):
            return f"{spec.name}={value!r} is outside [{spec.min}, {spec.max}]"
    elif spec.type == "str" and not isinstance(value, str):
        return f"{spec.name}={value!r} is not text"
    elif spec.type == "bool" and not isinstance(value, bool):
        return f"{spec.name}={value!r} is not true or false"
    if spec.choices and value not in spec.choices:
        return f"{spec.name}={value!r} is not one of {list(spec.choices)}"
    return None


def check_params(specs: tuple[ParamSpec, ...], params: Mapping[str, Any], tool: str) -> dict[str, Any]:
    """Return `params` with every declared default filled in, after checking each value against its declaration.

    Raises:
        InputError: a value that does not fit its declaration, or a name the tool does not declare.
    """
    declared = {p.name: p for p in specs}
    unknown = sorted(set(params) - set(declared))
    if unknown:
        raise InputError(
            f"tool {tool!r} has no parameter {', '.join(map(repr, unknown))} (declared: {sorted(declared)})"
        )
    out = {p.name: p.default for p in specs} | dict(params)
    for name, value in out.items():
        problem = param_problem(declared[name], value)
        if problem:
            raise InputError(f"tool {tool!r}: {problem}")
    return out
