"""Events to JSON-ready dicts and back, for the store, the reproducibility bundle and reloading a session's chat.

Images are never serialised (versions hold them); a plan is stored as its JSON model. `event_from_dict` rebuilds the
typed event so one renderer serves both a live turn and a reloaded one; kinds it does not know (written by a newer
costa) come back as None and are skipped.

>>> from costa.events import ToolFinished
>>> d = event_to_dict(ToolFinished("s1", "rapidocr_detect", 0, 0.12, 0.97, True, ("read 'SALE'",)))
>>> d["kind"], event_from_dict(d).reasons
('tool_finished', ("read 'SALE'",))
"""

from __future__ import annotations

import dataclasses
from typing import Any

from costa import events as E


def _classes() -> dict[str, type[E.Event]]:
    out: dict[str, type[E.Event]] = {}
    for obj in vars(E).values():
        if isinstance(obj, type) and issubclass(obj, E.Event) and obj is not E.Event and dataclasses.is_dataclass(obj):
            out["".join("_" + c.lower() if c.isupper() else c for c in obj.__name__).lstrip("_")] = obj
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return str(value)


def event_to_dict(ev: E.Event) -> dict[str, Any]:
    """A JSON-ready dict with `kind` and every field; images become their shape (or None)."""
    d: dict[str, Any] = {"kind": ev.kind}
    for f in dataclasses.fields(ev):
        v = getattr(ev, f.name)
        if f.name in ("image", "region"):  # pixels live in versions, not in the event log
            d[f.name] = None if v is None else list(getattr(v, "shape", ()))
        else:
            d[f.name] = _plain(v)
    return d


def _tuple(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_tuple(v) for v in value)
    return value


def event_from_dict(d: dict[str, Any]) -> E.Event | None:
    """The typed event for a dict from `event_to_dict`; None for an unknown kind. Images are not restored."""
    cls = _classes().get(d.get("kind", ""))
    if cls is None:
        return None
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name not in d:
            continue
        v = d[f.name]
        if f.name in ("image", "region"):
            v = None
        elif f.name == "plan" and isinstance(v, dict):
            from costa.types import Plan

            v = Plan.model_validate(v)
        elif isinstance(v, list):
            v = _tuple(v)
        kwargs[f.name] = v
    try:
        return cls(**kwargs)
    except TypeError:  # a required field missing: written by another costa version
        return None
