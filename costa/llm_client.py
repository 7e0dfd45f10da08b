"""One client for every LLM/VLM call costa makes, through the `openai` package against any OpenAI-compatible endpoint.

It works with OpenAI, vLLM, Ollama and LM Studio: the base URL, key and model come from `Settings`
(OPENAI_BASE_URL, OPENAI_API_KEY, COSTA_LLM_MODEL). What it adds to the bare client:

- every request, failed or not, becomes an `LlmCall` record (tokens, seconds, cost when a price is configured), so the
  cost ledger can show it;
- timeouts, connection errors, 429 and 5xx are retried `retries` times with exponential backoff (the openai client's
  own retries are off, so every attempt is recorded and the delays are ours to bound), then `LlmError` is raised;
- JSON mode (`response_format={"type": "json_object"}`) is asked for, and dropped for the rest of the client's life
  when the server rejects it with a 400/422; an image the server rejects the same way is dropped next;
- `image_data_url` turns an RGB array into a downscaled PNG data URL.

`openai` is imported on first use, so `import costa` stays light.

>>> from pathlib import Path
>>> LlmConfig.from_settings(Settings(home=Path("."))) is None  # nothing configured: the offline planner serves
True
"""

from __future__ import annotations

import base64
import io
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from costa.config import Settings
from costa.errors import CostaError
from costa.events import LlmCall

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

#: Longest side of an image sent to the model, in pixels (smaller images are sent as they are).
MAX_IMAGE_SIDE = 512
#: Longest wait between two retries, in seconds, whatever the backoff or a Retry-After header says.
MAX_BACKOFF_SECONDS = 30.0
#: Key sent to servers that need none (vLLM, Ollama, LM Studio ignore it; the openai client insists on one).
PLACEHOLDER_KEY = "not-needed"

Message = dict[str, Any]


class LlmError(CostaError):
    """An LLM request failed for good (after retries, or at once when retrying cannot help).

    `calls` records every attempt made, so the cost of a failure still reaches the ledger.
    """

    def __init__(self, message: str, calls: Sequence[LlmCall] = ()) -> None:
        super().__init__(message)
        self.calls = tuple(calls)


@dataclass(frozen=True)
class LlmConfig:
    """Where and how to reach the model.

    model None means "ask the server" (`GET /models`, first entry): vLLM and LM Studio serve one model.
    price_in / price_out: price of 1M prompt / completion tokens; None when not configured.
    """

    base_url: str | None
    api_key: str | None
    model: str | None
    timeout_seconds: float = 60.0
    retries: int = 2
    backoff_seconds: float = 1.0
    price_in: float | None = None
    price_out: float | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> LlmConfig | None:
        """The endpoint configured in `settings`, or None when there is none.

        An endpoint is configured by OPENAI_BASE_URL (any OpenAI-compatible server), or by OPENAI_API_KEY together
        with COSTA_LLM_MODEL (the OpenAI API itself). A key alone is not enough: costa does not guess a paid model.
        """
        if not settings.openai_base_url and not (settings.openai_api_key and settings.llm_model):
            return None
        return cls(
            base_url=settings.openai_base_url,
            api_key=settings.openai_api_key,
            model=settings.llm_model,
            timeout_seconds=settings.llm_timeout_seconds,
            retries=settings.llm_retries,
            backoff_seconds=settings.llm_backoff_seconds,
            price_in=settings.llm_price_in,
            price_out=settings.llm_price_out,
        )

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """Price of one call, or None when no price is configured (a missing one of the two counts as 0)."""
        if self.price_in is None and self.price_out is None:
            return None
        return (prompt_tokens * (self.price_in or 0.0) + completion_tokens * (self.price_out or 0.0)) / 1e6

    def describe(self) -> str:
        """ "model X at URL" for status lines and messages (never the key)."""
        where = self.base_url or "api.openai.com"
        return f"{self.model or '(server default model)'} at {where}"


@dataclass(frozen=True)
class LlmReply:
    """The text the model answered, the model that answered, and every request it took (retries included)."""

    text: str
    model: str
    calls: tuple[LlmCall, ...]


@dataclass
class LlmClient:
    """A thread-safe client for one endpoint; create one per process (e.g. in `Services`) and share it.

    Args:
        config: the endpoint.
        sleep: waits between retries (a test passes a recorder to keep runs fast).
    """

    config: LlmConfig
    sleep: Callable[[float], None] = time.sleep
    _client: Any = field(default=None, init=False, repr=False)
    _model: str | None = field(default=None, init=False, repr=False)
    _json_mode: bool = field(default=True, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def _openai(self) -> Any:
        with self._lock:
            if self._client is None:
                import openai  # imported here: about a second of imports nobody needs without an endpoint

                self._client = openai.OpenAI(
                    base_url=self.config.base_url,
                    api_key=self.config.api_key or PLACEHOLDER_KEY,
                    timeout=self.config.timeout_seconds,
                    max_retries=0,
                )
            return self._client

    def model(self) -> str:
        """The model to ask: COSTA_LLM_MODEL, else the first model the server lists.

        Raises:
            LlmError: no model is configured and the server lists none (or cannot be reached).
        """
        if self.config.model:
            return self.config.model
        with self._lock:
            if self._model is not None:
                return self._model
        import openai

        try:
            models = [m.id for m in self._openai().models.list()]
        except openai.OpenAIError as e:
            raise LlmError(f"COSTA_LLM_MODEL is not set and the server's model list is unavailable: {e}") from e
        if not models:
            raise LlmError("COSTA_LLM_MODEL is not set and the server lists no model")
        with self._lock:
            self._model = models[0]
        return models[0]

    def chat(self, messages: Sequence[Message], purpose: str, json_output: bool = True) -> LlmReply:
        """Send one chat completion request (temperature 0) and return the answer's text.

        Args:
            messages: OpenAI chat messages; user content may mix text and `image_url` parts.
            purpose: what the call is for, recorded in each `LlmCall` ("plan", "quality check", …).
            json_output: ask for a JSON object (dropped when the server does not support it).

        Raises:
            LlmError: the endpoint failed after the retries, or refused the request (bad key, unknown model, …).
        """
        import openai

        model = self.model()
        messages = list(messages)
        calls: list[LlmCall] = []
        retries_left = self.config.retries
        attempt = 0
        while True:
            kwargs: dict[str, Any] = {"model": model, "messages": messages, "temperature": 0}
            json_mode = json_output and self._json_mode
            if json_mode:
                kwargs["response_format"] = {"type": "json_object"}
            client = self._openai()
            t0 = time.perf_counter()
            try:
                response = client.chat.completions.create(**kwargs)
            except openai.APIStatusError as e:
                seconds = time.perf_counter() - t0
                error = f"HTTP {e.status_code}: {error_text(e)}"
                calls.append(LlmCall(purpose, model, seconds, ok=False, error=error))
                if e.status_code in (400, 422) and json_mode:
                    log.info("the endpoint rejected JSON mode (%s); asking without it from now on", error)
                    with self._lock:
                        self._json_mode = False
                    continue
                if e.status_code in (400, 422) and _has_image(messages):
                    log.info("the endpoint rejected the image (%s); asking with text only", error)
                    messages = _without_images(messages)
                    continue
                if e.status_code != 429 and e.status_code < 500:
                    raise LlmError(f"the LLM endpoint refused the request: {error}", calls) from e
                retry_after = _retry_after(e)
            except openai.APITimeoutError:
                seconds = time.perf_counter() - t0
                error = f"timed out after {seconds:.1f} s (limit {self.config.timeout_seconds:g} s)"
                calls.append(LlmCall(purpose, model, seconds, ok=False, error=error))
                retry_after = None
            except openai.APIConnectionError as e:
                seconds = time.perf_counter() - t0
                error = f"cannot connect: {e}"
                calls.append(LlmCall(purpose, model, seconds, ok=False, error=error))
                retry_after = None
            except openai.OpenAIError as e:  # e.g. a response body that is not a chat completion
                seconds = time.perf_counter() - t0
                calls.append(LlmCall(purpose, model, seconds, ok=False, error=str(e)))
                raise LlmError(f"the LLM endpoint answered something unusable: {e}", calls) from e
            else:
                seconds = time.perf_counter() - t0
                prompt_tokens, completion_tokens = _usage(response)
                calls.append(
                    LlmCall(
                        purpose,
                        model,
                        seconds,
                        prompt_tokens,
                        completion_tokens,
                        self.config.cost(prompt_tokens, completion_tokens),
                    )
                )
                return LlmReply(_content(response), str(getattr(response, "model", None) or model), tuple(calls))
            if retries_left <= 0:
                raise LlmError(f"{attempt + 1} request(s) failed, the last: {calls[-1].error}", calls)
            delay = min(self.config.backoff_seconds * 2**attempt, MAX_BACKOFF_SECONDS)
            if retry_after is not None:
                delay = min(max(delay, retry_after), MAX_BACKOFF_SECONDS)
            log.info("LLM %s failed (%s); retrying in %.2f s", purpose, calls[-1].error, delay)
            self.sleep(delay)
            retries_left -= 1
            attempt += 1


def error_text(e: Any) -> str:
    """The endpoint's own error message (OpenAI-style body), at most 300 characters."""
    body = getattr(e, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        if message:
            return str(message)[:300]
    return str(getattr(e, "message", e))[:300]


def _retry_after(e: Any) -> float | None:
    headers = getattr(getattr(e, "response", None), "headers", None) or {}
    raw = headers.get("retry-after") if hasattr(headers, "get") else None
    try:
        return float(raw) if raw is not None else None
    except ValueError:
        return None


def _usage(response: Any) -> tuple[int, int]:
    usage = getattr(response, "usage", None)
    prompt = getattr(usage, "prompt_tokens", None) if usage is not None else None
    completion = getattr(usage, "completion_tokens", None) if usage is not None else None
    return int(prompt or 0), int(completion or 0)


def _content(response: Any) -> str:
    choices = getattr(response, "choices", None) or []
    if not choices:
        return ""
    message = getattr(choices[0], "message", None)
    return str(getattr(message, "content", None) or "")


def _has_image(messages: Sequence[Message]) -> bool:
    return any(
        isinstance(m.get("content"), list) and any(p.get("type") == "image_url" for p in m["content"]) for m in messages
    )


def _without_images(messages: Sequence[Message]) -> list[Message]:
    out: list[Message] = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            text = "\n".join(p.get("text", "") for p in content if p.get("type") == "text")
            m = {**m, "content": text + "\n(The image could not be sent: plan from the text alone.)"}
        out.append(m)
    return out


def image_data_url(image: np.ndarray, max_side: int = MAX_IMAGE_SIDE) -> str:
    """An RGB uint8 image as a PNG data URL, downscaled (aspect kept) so its longest side is at most `max_side`."""
    from PIL import Image

    pil = Image.fromarray(image)
    scale = max_side / max(pil.size)
    if scale < 1.0:
        pil = pil.resize(
            (max(1, round(pil.width * scale)), max(1, round(pil.height * scale))), Image.Resampling.LANCZOS
        )
    buf = io.BytesIO()
    pil.save(buf, format="PNG", optimize=True)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def parse_json_object(text: str) -> dict[str, Any]:
    """The JSON object in a model's answer: the whole text, a fenced ```json block, or the outermost {...} span.

    Raises:
        ValueError: no JSON object can be read; the message quotes the start of the text.

    >>> parse_json_object('Sure! ```json\\n{"a": 1}\\n```')
    {'a': 1}
    """
    candidates = [text.strip()]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    error = "the answer is empty"
    for candidate in candidates:
        if not candidate:
            continue
        try:
            value = json.loads(candidate)
        except ValueError as e:
            error = f"not valid JSON ({e})"
            continue
        if isinstance(value, dict):
            return value
        error = f"expected a JSON object, got {type(value).__name__}"
    snippet = text.strip()[:120]
    raise ValueError(f"{error}; the answer began {snippet!r}")


def quote_data(value: Any) -> str:
    """JSON-encode user or OCR text for a prompt, with <, > and & escaped so no text can close a data block.

    >>> print(quote_data("stop <END> now"))
    "stop \\u003cEND\\u003e now"
    """
    text = json.dumps(value, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
