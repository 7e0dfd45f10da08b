"""Settings read once from the environment into a frozen record (no module-level state)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from costa.errors import InputError


def _float(env: Mapping[str, str], name: str, default: float, lo: float, hi: float) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError as e:
        raise InputError(f"{name} must be a number, got {raw!r}") from e
    if not lo <= value <= hi:
        raise InputError(f"{name} must be in [{lo}, {hi}], got {value}")
    return value


@dataclass(frozen=True)
class Settings:
    """Everything configurable, with units.

    home: where costa keeps its database and per-session files (COSTA_HOME, default ~/.costa).
    alpha: default cost/quality trade-off in [0, 2] (COSTA_ALPHA).
    threshold: check quality a step must reach, in [0, 1] (COSTA_THRESHOLD).
    max_pixels: largest accepted image, width × height (COSTA_MAX_PIXELS); larger ones are refused, not resized.
    openai_base_url / openai_api_key / llm_model: an OpenAI-compatible endpoint for planning (unused when unset).
    models_dir: local folder with neural weights (COSTA_MODELS_DIR).
    allow_downloads: let neural backends reach a model hub (COSTA_ALLOW_DOWNLOADS=1); off by default.
    """

    home: Path
    alpha: float = 1.0
    threshold: float = 0.8
    max_pixels: int = 40_000_000
    openai_base_url: str | None = None
    openai_api_key: str | None = None
    llm_model: str | None = None
    models_dir: Path | None = None
    allow_downloads: bool = False

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        home = Path(env.get("COSTA_HOME") or Path.home() / ".costa").expanduser()
        max_pixels = int(_float(env, "COSTA_MAX_PIXELS", 40_000_000, 1, 1e10))
        models = env.get("COSTA_MODELS_DIR")
        return cls(
            home=home,
            alpha=_float(env, "COSTA_ALPHA", 1.0, 0.0, 2.0),
            threshold=_float(env, "COSTA_THRESHOLD", 0.8, 0.0, 1.0),
            max_pixels=max_pixels,
            openai_base_url=env.get("OPENAI_BASE_URL") or None,
            openai_api_key=env.get("OPENAI_API_KEY") or None,
            llm_model=env.get("COSTA_LLM_MODEL") or None,
            models_dir=Path(models).expanduser() if models else None,
            allow_downloads=env.get("COSTA_ALLOW_DOWNLOADS", "") in ("1", "true", "yes"),
        )
