"""The request rate limit per client as an ASGI middleware (`costa.ratelimit`): every request that starts work —
an event joining the queue (page and API), a `/call/` or `/run/` of a named endpoint, an upload — takes one token of
its client address's bucket; past the limit it is answered 429 with one sentence and a Retry-After, and nothing runs.
Reading the page, its files and the event streams is not counted. `StorageGuard` answers an upload to a full or
read-only COSTA_HOME in one sentence."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from costa.ratelimit import RateLimit, refusal
from costa.store.database import DISK_FULL, READ_ONLY

#: Paths (after the mount prefix) whose POSTs start work.
COUNTED = ("/queue/join", "/call/", "/run/", "/upload")


class RateGuard:
    """ASGI middleware: at most `per_minute` work-starting requests per client address (0: no limit)."""

    def __init__(self, app: Any, per_minute: float) -> None:
        self.app = app
        self.limit = RateLimit(per_minute)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") == "http" and scope.get("method") == "POST" and self.limit.per_minute > 0:
            path = scope.get("path", "")
            if any(c in path for c in COUNTED):
                client = scope.get("client") or ("?", 0)
                seconds = self.limit.wait(str(client[0]))
                if seconds > 0:
                    text = refusal(self.limit, seconds)
                    body = json.dumps({"detail": text, "error": text})
                    retry = str(round(seconds + 0.5)).encode()
                    headers = [(b"content-type", b"application/json"), (b"retry-after", retry)]
                    await send({"type": "http.response.start", "status": 429, "headers": headers})
                    await send({"type": "http.response.body", "body": body.encode()})
                    return
        await self.app(scope, receive, send)


#: Free bytes an upload must leave on COSTA_HOME's disk beyond its own size (the store's row, the journal line).
UPLOAD_MARGIN = 1 << 20


def storage_refusal(home: Path, size: int) -> str | None:
    """Why an upload of `size` bytes cannot be written under `home` now (read-only, full), or None."""
    try:
        st = os.statvfs(home)
    except OSError:
        return None
    if st.f_flag & os.ST_RDONLY:
        return READ_ONLY
    if st.f_bavail * st.f_frsize < size + UPLOAD_MARGIN:
        return DISK_FULL
    return None


class StorageGuard:
    """ASGI middleware: an upload to a full or read-only COSTA_HOME (Gradio keeps its copies there) is answered 507
    with the store's one sentence before Gradio writes a byte — Gradio's own answer was a bare HTTP 500, and it left
    the half-written file open."""

    def __init__(self, app: Any, home: Path) -> None:
        self.app = app
        self.home = Path(home)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") == "http" and scope.get("method") == "POST" and scope.get("path", "").endswith("/upload"):
            length = next((v for k, v in scope.get("headers", ()) if k == b"content-length"), b"0")
            why = storage_refusal(self.home, int(length) if length.isdigit() else 0)
            if why is not None:
                body = json.dumps({"detail": why, "error": why}).encode()
                await send({"type": "http.response.start", "status": 507,
                            "headers": [(b"content-type", b"application/json")]})  # fmt: skip
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
