"""Exported files are their owner's: an ASGI middleware that refuses another signed-in user's download by URL.

Gradio serves every returned file at `/gradio_api/file=<path>` to anyone signed in. The core records which user
exported each file name (`SessionCore.export_owner`); with login on, a request for one of those names from anyone else
gets 404, as if it did not exist. Files the core did not export (uploads, examples) are Gradio's business.
"""

from __future__ import annotations

from http.cookies import SimpleCookie
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote

from costa.session import SessionCore


class ExportGuard:
    """ASGI middleware: 404 for an exported file requested by anyone but the user who exported it."""

    def __init__(self, app: Any, core: SessionCore) -> None:
        self.app = app
        self.core = core

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "") if scope.get("type") == "http" else ""
        if "/file=" in path:
            name = PurePosixPath(unquote(path.split("/file=", 1)[1])).name
            known, owner = self.core.versions.export_owner(name)
            if known and owner is not None and owner != _user(scope):
                await send(
                    {"type": "http.response.start", "status": 404, "headers": [(b"content-type", b"text/plain")]}
                )
                await send({"type": "http.response.body", "body": b"Not found"})
                return
        await self.app(scope, receive, send)


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
