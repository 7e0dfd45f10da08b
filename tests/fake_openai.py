"""A FAKE OpenAI-compatible HTTP endpoint for tests: scripted replies, every request recorded. It is not a model.

Runs the stdlib `http.server` in a thread on 127.0.0.1 (a free port), so the real `openai` client — and a
`python -m costa` subprocess pointed at it with OPENAI_BASE_URL — talk HTTP to it exactly as to vLLM or OpenAI.

    with FakeOpenAI([chat({"subtasks": []}), error(500)]) as fake:
        ...  # OPENAI_BASE_URL=fake.base_url
        fake.chat_requests[0]["messages"]

Each POST /v1/chat/completions takes the next scripted reply (in order); when the script runs out the fake answers
500 "fake script exhausted" so a test that makes more requests than it expected sees it. GET /v1/models lists
`models`. POST /v1/images/edits (multipart: image, mask, prompt…) takes the next reply of `images` (its own script,
so a planner's chat requests do not take an image edit's reply; the same "exhausted" 500 when it runs out);
`image_edit(png)` scripts a FAKE edit result (the PNG it is given, not an edit of anything), and
`image_edit_requests` holds each request's form fields and files.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Scripted:
    """One scripted HTTP reply: status, body (a dict is sent as JSON, a str as is), a delay before answering."""

    status: int = 200
    body: Any = None
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


def chat(
    content: str | dict[str, Any],
    prompt_tokens: int = 1200,
    completion_tokens: int = 80,
    model: str = "fake-model",
    delay: float = 0.0,
) -> Scripted:
    """A chat completion whose message content is `content` (a dict is JSON-encoded, as a JSON-mode model would)."""
    text = json.dumps(content) if isinstance(content, dict) else content
    body = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop", "logprobs": None}
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
    return Scripted(200, body, delay)


def error(status: int, message: str = "fake error", headers: dict[str, str] | None = None) -> Scripted:
    """An OpenAI-style error body with `status` (500, 429, 400…)."""
    return Scripted(status, {"error": {"message": message, "type": "fake_error", "code": status}}, 0.0, headers or {})


def image_edit(png: bytes, delay: float = 0.0, as_url: bool = False) -> Scripted:
    """A FAKE images API reply carrying `png` (b64_json, or a data: URL when `as_url`), whatever was sent."""
    b64 = base64.b64encode(png).decode("ascii")
    item = {"url": "data:image/png;base64," + b64} if as_url else {"b64_json": b64}
    usage = {"input_tokens": 300, "output_tokens": 4000, "total_tokens": 4300}
    return Scripted(200, {"created": int(time.time()), "data": [item], "usage": usage}, delay)


def parse_multipart(content_type: str, raw: bytes) -> dict[str, Any]:
    """A multipart/form-data body as {"fields": {name: text}, "files": {name: {"filename", "type", "data"}}}."""
    from email.parser import BytesParser
    from email.policy import HTTP

    message = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw)
    fields: dict[str, str] = {}
    files: dict[str, dict[str, Any]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        data = part.get_payload(decode=True) or b""
        filename = part.get_filename()
        if filename is not None:
            files[str(name)] = {"filename": filename, "type": part.get_content_type(), "data": data}
        else:
            fields[str(name)] = data.decode("utf-8", "replace")
    return {"fields": fields, "files": files}


def slow(seconds: float) -> Scripted:
    """A reply that comes after `seconds` (longer than the client's timeout, the client gives up first)."""
    return chat({"subtasks": []}, delay=seconds)


class FakeOpenAI:
    """The fake endpoint; use as a context manager. `requests` holds every request as parsed JSON plus path/method."""

    def __init__(
        self,
        script: list[Scripted] | None = None,
        models: tuple[str, ...] = ("fake-model",),
        images: list[Scripted] | None = None,
    ) -> None:
        self.script: list[Scripted] = list(script or [])
        self.images: list[Scripted] = list(images or [])
        self.models = models
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the fake first (with FakeOpenAI(...) as fake)"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """Bodies of the chat completion requests, in order."""
        return [r["json"] for r in self.requests if r["path"].endswith("/chat/completions")]

    @property
    def image_edit_requests(self) -> list[dict[str, Any]]:
        """Form fields and files of the /images/edits requests, in order (see `parse_multipart`)."""
        return [r["json"] for r in self.requests if r["path"].rstrip("/").endswith("/images/edits")]

    def push(self, *replies: Scripted) -> None:
        with self._lock:
            self.script.extend(replies)

    def _next(self, images: bool = False) -> Scripted:
        with self._lock:
            script = self.images if images else self.script
            return script.pop(0) if script else error(500, "fake script exhausted")

    def __enter__(self) -> FakeOpenAI:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                pass

            def _record(self, body: Any) -> None:
                with fake._lock:
                    fake.requests.append(
                        {"method": self.command, "path": self.path, "headers": dict(self.headers), "json": body}
                    )

            def _send(self, reply: Scripted) -> None:
                if reply.delay:
                    time.sleep(reply.delay)
                data = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
                raw = data.encode("utf-8")
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(raw)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out and hung up
                    pass

            def do_GET(self) -> None:
                self._record(None)
                if self.path.rstrip("/").endswith("/models"):
                    body = {
                        "object": "list",
                        "data": [{"id": m, "object": "model", "owned_by": "fake"} for m in fake.models],
                    }
                    self._send(Scripted(200, body))
                else:
                    self._send(error(404, f"fake has no {self.path}"))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                kind = self.headers.get("Content-Type") or ""
                body: Any
                if kind.startswith("multipart/form-data"):
                    body = parse_multipart(kind, raw)
                else:
                    try:
                        body = json.loads(raw)
                    except ValueError:
                        body = raw.decode("utf-8", "replace")
                self._record(body)
                if not self.path.rstrip("/").endswith(("/chat/completions", "/images/edits")):
                    self._send(error(404, f"fake has no {self.path}"))
                    return
                self._send(fake._next(images=self.path.rstrip("/").endswith("/images/edits")))

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            block_on_close = False  # a handler still sleeping for a timeout test must not hold up the test

        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()
