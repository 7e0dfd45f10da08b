"""A session's files are their owner's: an ASGI middleware that refuses another signed-in user's download by URL.

Gradio serves every returned file at `/gradio_api/file=<path>` to anyone signed in. Two records decide, with login on:
the core's record of which user exported each file name (`SessionCore.export_owner`), and the guard's own record of
which users each file was *served to* — every file URL in a response to an event (page or API: an edit's result, an
undo's image, a gallery thumbnail) or an upload is noted for the signed-in user it went to. A request for a recorded
file from anyone else gets 404, as if it did not exist; files never handed out (Gradio's assets) pass.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from http.cookies import SimpleCookie
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote

from costa.session import SessionCore

#: A file URL in a response body (JSON, possibly inside an event stream).
FILE_URL = re.compile(rb'/file=([^"\\\s]+)')
#: Responses whose file URLs are recorded: event streams and results (page and API) and uploads.
SERVED = ("/queue/data", "/call/", "/run/", "/upload")
#: Most served files remembered (the oldest are forgotten; Gradio's cache deletes them by age anyway).
MAX_SERVED = 200_000


class ServedFiles:
    """File path → the signed-in users it was served to (bounded, oldest forgotten first)."""

    def __init__(self, limit: int = MAX_SERVED) -> None:
        self.limit = limit
        self._users: OrderedDict[str, set[str]] = OrderedDict()
        self._lock = threading.Lock()

    def note(self, path: str, user: str) -> None:
        key = unquote(path)
        with self._lock:
            self._users.setdefault(key, set()).add(user)
            self._users.move_to_end(key)
            while len(self._users) > self.limit:
                self._users.popitem(last=False)

    def allowed(self, path: str, user: str | None) -> bool:
        """Whether `user` may fetch `path`: not served to anyone signed in, or served to them."""
        with self._lock:
            users = self._users.get(unquote(path))
        return users is None or (user is not None and user in users)


class ExportGuard:
    """ASGI middleware: 404 for a session's file (export, result, upload) requested by anyone but its owner."""

    def __init__(self, app: Any, core: SessionCore) -> None:
        self.app = app
        self.core = core
        self.served = ServedFiles()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "") if scope.get("type") == "http" else ""
        login = bool(getattr(scope.get("app"), "tokens", None)) or bool(self.core.settings.auth)
        if "/file=" in path:
            target = path.split("/file=", 1)[1]
            known, owner = self.core.versions.export_owner(PurePosixPath(unquote(target)).name)
            user = _user(scope)
            if (known and owner is not None and owner != user) or (login and not self.served.allowed(target, user)):
                await send(
                    {"type": "http.response.start", "status": 404, "headers": [(b"content-type", b"text/plain")]}
                )
                await send({"type": "http.response.body", "body": b"Not found"})
                return
        elif login and any(p in path for p in SERVED):
            user = _user(scope)
            if user is not None:
                await self.app(scope, receive, self._noting(send, user, path.endswith("/upload")))
                return
        await self.app(scope, receive, send)

    def _noting(self, send: Any, user: str, upload: bool) -> Any:
        """`send`, noting every file URL in the response body as served to `user` (before it reaches them)."""
        tail = b""

        async def noting(message: dict[str, Any]) -> None:
            nonlocal tail
            if message.get("type") == "http.response.body":
                body = tail + message.get("body", b"")
                for m in FILE_URL.finditer(body):
                    self.served.note(m.group(1).decode("utf-8", "replace"), user)
                if upload:
                    self._note_upload(body, user)
                tail = body[-2048:]  # a URL split across two chunks is found in the next one
            await send(message)

        return noting

    def _note_upload(self, body: bytes, user: str) -> None:
        try:
            paths = json.loads(body)
        except ValueError:
            return
        for p in paths if isinstance(paths, list) else ():
            if isinstance(p, str):
                self.served.note(p, user)


def _user(scope: dict[str, Any]) -> str | None:
    """The signed-in user of a request, from Gradio's login cookie."""
    app = scope.get("app")
    tokens, cookie_id = getattr(app, "tokens", None), getattr(app, "cookie_id", None)
    if not tokens:
        return None
    cookies: SimpleCookie = SimpleCookie()
    for k, v in scope.get("headers", ()):
        if k == b"cookie":
            cookies.load(v.decode("latin-1"))
    for key in (f"access-token-{cookie_id}", f"access-token-unsecure-{cookie_id}"):
        if key in cookies:
            return tokens.get(cookies[key].value)
    return None
