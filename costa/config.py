"""Settings read once from the environment into a frozen record (no module-level state)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
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


#: Words that switch a yes/no variable off (COSTA_REFLECT, COSTA_REFLECT_VLM); anything else set means on.
FALSE_WORDS = ("0", "false", "no", "off")
#: Most models COSTA_REFLECT_MODELS may name (one per VLM reflection role).
MAX_REFLECT_MODELS = 3


def _switch(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    return raw.strip().lower() not in FALSE_WORDS


def _models(env: Mapping[str, str], name: str) -> tuple[str, ...]:
    names = tuple(m.strip() for m in env.get(name, "").split(",") if m.strip())
    if len(names) > MAX_REFLECT_MODELS:
        raise InputError(f"{name} names {len(names)} models; at most {MAX_REFLECT_MODELS}")
    return names


def _optional_float(env: Mapping[str, str], name: str) -> float | None:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return None
    return _float(env, name, 0.0, 0.0, 1e6)


def _auth(raw: str) -> tuple[tuple[str, str], ...]:
    """Parse COSTA_AUTH="user:password,user2:password2" (a password may contain ':' but not ',')."""
    pairs = []
    for item in raw.split(","):
        if not item.strip():
            continue
        user, sep, password = item.strip().partition(":")
        if not sep or not user or not password:
            raise InputError("COSTA_AUTH must be user:password pairs separated by commas, e.g. alice:secret")
        pairs.append((user, password))
    return tuple(pairs)


def _retention_days(env: Mapping[str, str]) -> float | None:
    """COSTA_RETENTION_DAYS: unset = 30 days when COSTA_AUTH is set (several users), else off; 0 / off = never.

    >>> _retention_days({}), _retention_days({"COSTA_AUTH": "a:b"}), _retention_days({"COSTA_RETENTION_DAYS": "off"})
    (None, 30.0, None)
    """
    raw = (env.get("COSTA_RETENTION_DAYS") or "").strip().lower()
    if raw == "":
        return 30.0 if (env.get("COSTA_AUTH") or "").strip() else None
    if raw in ("0", "off", "no", "never"):
        return None
    return _float(env, "COSTA_RETENTION_DAYS", 30.0, 0.001, 36_500.0)


#: What COSTA_RUNNER may say: the in-process default, a local Ray, or a Ray cluster's client address.
RUNNER_FORMS = ("in_process", "ray", "ray://HOST:PORT")


def _runner(env: Mapping[str, str]) -> str:
    """COSTA_RUNNER: unset or "in_process" (default), "ray" (a local Ray), or "ray://HOST:PORT" (a Ray cluster).

    >>> _runner({}), _runner({"COSTA_RUNNER": "ray"}), _runner({"COSTA_RUNNER": "ray://gpu-box:10001"})
    ('in_process', 'ray', 'ray://gpu-box:10001')
    """
    raw = (env.get("COSTA_RUNNER") or "").strip()
    if raw in ("", "in_process"):
        return "in_process"
    if raw == "ray":
        return raw
    host, sep, port = raw.removeprefix("ray://").rpartition(":")
    if raw.startswith("ray://") and sep and host and "/" not in host and port.isdigit() and 1 <= int(port) <= 65535:
        return raw
    raise InputError(f"COSTA_RUNNER must be one of {', '.join(RUNNER_FORMS)}, got {raw!r}")


def listen_address(env: Mapping[str, str] | None = None) -> tuple[str, int]:
    """Where `python app.py` listens: (host, port) from COSTA_HOST / COSTA_PORT, else Gradio's own
    GRADIO_SERVER_NAME / GRADIO_SERVER_PORT (so a Gradio deployment's settings work), else 127.0.0.1:7860.

    The COSTA_ variable wins when both are set. Raises `InputError` naming the variable for a port that is not a
    whole number in [1, 65535].

    Example:
        >>> listen_address({"GRADIO_SERVER_PORT": "8080"})
        ('127.0.0.1', 8080)
        >>> listen_address({"COSTA_PORT": "9", "GRADIO_SERVER_PORT": "8"})
        ('127.0.0.1', 9)
    """
    env = os.environ if env is None else env
    host = env.get("COSTA_HOST") or env.get("GRADIO_SERVER_NAME") or "127.0.0.1"
    name = "COSTA_PORT" if env.get("COSTA_PORT") else "GRADIO_SERVER_PORT" if env.get("GRADIO_SERVER_PORT") else ""
    raw = env.get(name, "7860") if name else "7860"
    try:
        port = int(raw)
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise InputError(f"{name} must be a port number in [1, 65535], got {raw!r}")
    return host, port


@dataclass(frozen=True)
class Settings:
    """Everything configurable, with units.

    home: where costa keeps its database and per-session files (COSTA_HOME, default ~/.costa).
    alpha: default cost/quality trade-off in [0, 2] (COSTA_ALPHA).
    threshold: check quality a step must reach, in [0, 1] (COSTA_THRESHOLD).
    max_pixels: largest accepted image, width × height (COSTA_MAX_PIXELS); larger ones are refused, not resized.
    openai_base_url / openai_api_key / llm_model: an OpenAI-compatible endpoint for planning and VLM checks
        (OPENAI_BASE_URL, OPENAI_API_KEY, COSTA_LLM_MODEL); the offline planner serves when none is configured.
    llm_timeout_seconds: limit for one LLM request (COSTA_LLM_TIMEOUT, default 60).
    llm_retries: retries after a timeout, 429 or 5xx (COSTA_LLM_RETRIES, default 2); then the offline planner serves.
    llm_backoff_seconds: first retry delay, doubled per retry and capped at 30 s (COSTA_LLM_BACKOFF, default 1).
    llm_price_in / llm_price_out: price of 1M prompt / completion tokens in your currency (COSTA_LLM_PRICE_IN,
        COSTA_LLM_PRICE_OUT); when either is set (the other counts as 0) every LLM call's cost goes into the ledger.
    models_dir: local folder with neural weights (COSTA_MODELS_DIR).
    allow_downloads: let neural backends reach a model hub (COSTA_ALLOW_DOWNLOADS=1); off by default.
    model_memory_gb: most gigabytes of loaded neural models held at once (COSTA_MODEL_MEMORY_GB); least recently
        used models are unloaded beyond it; unset = no limit.
    device: the torch device neural tools use (COSTA_DEVICE: cpu, cuda, cuda:1, mps); unset = the best found.
    max_upload_mb: largest accepted upload in megabytes (COSTA_MAX_UPLOAD_MB, default 25).
    concurrency: turns the app runs at once, one queue shared by every tool-running event (COSTA_CONCURRENCY,
        default 2; set 1 on a single GPU).
    queue_size: requests the app queues before refusing more (COSTA_QUEUE_SIZE, default 64).
    auth: (user, password) pairs required to use the app, from COSTA_AUTH="user:password,user2:password2".
    mcp: also serve the app's API as an MCP server (COSTA_MCP=1; needs the `mcp` package).
    tmp_idle_seconds: a session unused for this long loses its temporary files (exports; its history stays)
        (COSTA_TMP_IDLE_SECONDS, default 1800).
    reflect: judge every finished subtask with the reflection experts and retry on their feedback (COSTA_REFLECT,
        default on; COSTA_REFLECT=0 turns it off). Its numbers live in tool_tables/reflection.yaml.
    reflect_vlm: let VLM experts judge too when an endpoint is configured (COSTA_REFLECT_VLM, default on; 0 keeps
        reflection offline).
    reflect_models: up to three models for the VLM reflection roles, dealt to them in turn (COSTA_REFLECT_MODELS,
        comma-separated; empty = the planner's model).
    reflection_table: another reflection table instead of tool_tables/reflection.yaml (COSTA_REFLECTION_TABLE).
    reflection_votes: another votes table instead of tool_tables/reflection_votes.csv (COSTA_REFLECTION_VOTES):
        which experts' dimensions vote, per subtask kind, from their AUC on real photos.
    calibration_table: another real-photo calibration table instead of tool_tables/calibration.csv
        (COSTA_CALIBRATION_TABLE): which passed steps costa may call verified done (`costa.calibration`).
    tools_off: tool ids switched off for this process (COSTA_TOOLS_OFF, comma-separated, e.g. "recolor_lab"): the
        search routes around them as around any tool that is not ready (comparisons, demos, a misbehaving tool).
    image_edit_model: the images model of the endpoint used for masked edits through `/v1/images/edits`
        (COSTA_IMAGE_EDIT_MODEL, e.g. gpt-image-1 or dall-e-2); unset = the image edit API tools are unavailable.
    image_edit_size: the size "WxH" in pixels the images endpoint accepts and returns (COSTA_IMAGE_EDIT_SIZE,
        default 1024x1024); the edited crop is sent at this size.
    image_edit_price: price of one edited image in your currency (COSTA_IMAGE_EDIT_PRICE); unset = no cost recorded.
    database_url: the store's database (COSTA_DATABASE_URL: postgresql://… for several replicas); unset = SQLite in
        COSTA_HOME.
    retention_days: a session idle for this many days is deleted with its files (COSTA_RETENTION_DAYS; unset = off
        for a single user, 30 when COSTA_AUTH is set; 0 or "off" = never).
    quota_sessions / quota_versions / quota_gb: most sessions, image versions and gigabytes of images one user keeps
        (COSTA_QUOTA_SESSIONS 500, COSTA_QUOTA_VERSIONS 10000, COSTA_QUOTA_GB 10; 0 = no limit). Without login every
        session is the same anonymous user's, so they bound the whole store.
    rate_limit: requests per minute one client (address) may make to the app's API (COSTA_RATE_LIMIT, default 240;
        0 = no limit); bursts of a quarter of it pass.
    turn_megapixels: largest image a turn edits, in megapixels (COSTA_TURN_MEGAPIXELS); unset = by machine (8 per CPU
        core, at least 8; COSTA_MAX_PIXELS with a GPU).
    runner: where tool calls run (COSTA_RUNNER): "in_process" (default), "ray" (a local Ray on 127.0.0.1: the
        families tool_tables/deployments.csv serves are Ray Serve deployments) or "ray://HOST:PORT" (a Ray cluster).
    runner_timeout_seconds: longest one remote tool call may take before it is cancelled and recorded as a failure
        (COSTA_RUNNER_TIMEOUT, default 600); in-process calls are not timed out.
    deployments_table: another deployments table instead of tool_tables/deployments.csv (COSTA_DEPLOYMENTS_TABLE).
    """

    home: Path
    alpha: float = 1.0
    threshold: float = 0.8
    max_pixels: int = 40_000_000
    openai_base_url: str | None = None
    openai_api_key: str | None = None
    llm_model: str | None = None
    llm_timeout_seconds: float = 60.0
    llm_retries: int = 2
    llm_backoff_seconds: float = 1.0
    llm_price_in: float | None = None
    llm_price_out: float | None = None
    models_dir: Path | None = None
    allow_downloads: bool = False
    model_memory_gb: float | None = None
    device: str | None = None
    max_upload_mb: float = 25.0
    concurrency: int = 2
    queue_size: int = 64
    auth: tuple[tuple[str, str], ...] = field(default=(), repr=False)  # passwords: keep out of logs
    mcp: bool = False
    tmp_idle_seconds: float = 1800.0
    reflect: bool = True
    reflect_vlm: bool = True
    reflect_models: tuple[str, ...] = ()
    reflection_table: Path | None = None
    reflection_votes: Path | None = None
    calibration_table: Path | None = None
    tools_off: tuple[str, ...] = ()
    image_edit_model: str | None = None
    image_edit_size: str = "1024x1024"
    image_edit_price: float | None = None
    database_url: str | None = None
    retention_days: float | None = None
    quota_sessions: int = 500
    quota_versions: int = 10_000
    quota_gb: float = 10.0
    rate_limit: float = 240.0
    turn_megapixels: float | None = None
    runner: str = "in_process"
    runner_timeout_seconds: float = 600.0
    deployments_table: Path | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        home = Path(env.get("COSTA_HOME") or Path.home() / ".costa").expanduser()
        max_pixels = int(_float(env, "COSTA_MAX_PIXELS", 40_000_000, 1, 1e10))
        models = env.get("COSTA_MODELS_DIR")
        if env.get("COSTA_LLM_RETRIES") and not str(env["COSTA_LLM_RETRIES"]).strip().isdigit():
            raise InputError(f"COSTA_LLM_RETRIES must be a whole number, got {env['COSTA_LLM_RETRIES']!r}")
        return cls(
            home=home,
            alpha=_float(env, "COSTA_ALPHA", 1.0, 0.0, 2.0),
            threshold=_float(env, "COSTA_THRESHOLD", 0.8, 0.0, 1.0),
            max_pixels=max_pixels,
            openai_base_url=env.get("OPENAI_BASE_URL") or None,
            openai_api_key=env.get("OPENAI_API_KEY") or None,
            llm_model=env.get("COSTA_LLM_MODEL") or None,
            llm_timeout_seconds=_float(env, "COSTA_LLM_TIMEOUT", 60.0, 0.01, 3600.0),
            llm_retries=int(_float(env, "COSTA_LLM_RETRIES", 2, 0, 10)),
            llm_backoff_seconds=_float(env, "COSTA_LLM_BACKOFF", 1.0, 0.0, 60.0),
            llm_price_in=_optional_float(env, "COSTA_LLM_PRICE_IN"),
            llm_price_out=_optional_float(env, "COSTA_LLM_PRICE_OUT"),
            models_dir=Path(models).expanduser() if models else None,
            allow_downloads=env.get("COSTA_ALLOW_DOWNLOADS", "") in ("1", "true", "yes"),
            model_memory_gb=_optional_float(env, "COSTA_MODEL_MEMORY_GB"),
            device=(env.get("COSTA_DEVICE") or "").strip().lower() or None,
            max_upload_mb=_float(env, "COSTA_MAX_UPLOAD_MB", 25.0, 0.001, 10_000.0),
            concurrency=int(_float(env, "COSTA_CONCURRENCY", 2, 1, 64)),
            queue_size=int(_float(env, "COSTA_QUEUE_SIZE", 64, 1, 10_000)),
            auth=_auth(env.get("COSTA_AUTH", "")),
            mcp=env.get("COSTA_MCP", "") in ("1", "true", "yes"),
            tmp_idle_seconds=_float(env, "COSTA_TMP_IDLE_SECONDS", 1800.0, 1.0, 7 * 86400.0),
            reflect=_switch(env, "COSTA_REFLECT", True),
            reflect_vlm=_switch(env, "COSTA_REFLECT_VLM", True),
            reflect_models=_models(env, "COSTA_REFLECT_MODELS"),
            reflection_table=Path(table).expanduser() if (table := env.get("COSTA_REFLECTION_TABLE")) else None,
            reflection_votes=Path(votes).expanduser() if (votes := env.get("COSTA_REFLECTION_VOTES")) else None,
            calibration_table=Path(cal).expanduser() if (cal := env.get("COSTA_CALIBRATION_TABLE")) else None,
            tools_off=tuple(t.strip() for t in (env.get("COSTA_TOOLS_OFF") or "").split(",") if t.strip()),
            image_edit_model=env.get("COSTA_IMAGE_EDIT_MODEL") or None,
            image_edit_size=(env.get("COSTA_IMAGE_EDIT_SIZE") or "1024x1024").strip().lower(),
            image_edit_price=_optional_float(env, "COSTA_IMAGE_EDIT_PRICE"),
            database_url=(env.get("COSTA_DATABASE_URL") or "").strip() or None,
            retention_days=_retention_days(env),
            quota_sessions=int(_float(env, "COSTA_QUOTA_SESSIONS", 500, 0, 1e9)),
            quota_versions=int(_float(env, "COSTA_QUOTA_VERSIONS", 10_000, 0, 1e12)),
            quota_gb=_float(env, "COSTA_QUOTA_GB", 10.0, 0.0, 1e6),
            rate_limit=_float(env, "COSTA_RATE_LIMIT", 240.0, 0.0, 1e7),
            turn_megapixels=_optional_float(env, "COSTA_TURN_MEGAPIXELS"),
            runner=_runner(env),
            runner_timeout_seconds=_float(env, "COSTA_RUNNER_TIMEOUT", 600.0, 0.01, 86_400.0),
            deployments_table=Path(dep).expanduser() if (dep := env.get("COSTA_DEPLOYMENTS_TABLE")) else None,
        )
