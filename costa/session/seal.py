"""Seal the session ids a browser keeps, with a key that never leaves the server.

The page stores its session ids in the browser (`gr.BrowserState`). Gradio's own encryption of that value uses a
secret it sends to the page, so it only obfuscates; here the value is sealed on the server instead (HMAC-SHA256
keystream + tag over a random nonce, key in `<home>/browser_secret`, 0600). A sealed token is still a bearer token
for its sessions (like a cookie), but the page's config and the stored value no longer reveal a session id.

>>> import tempfile
>>> s = Sealer(b"k" * 32)
>>> s.unseal(s.seal(["abc", "def"]))
['abc', 'def']
>>> s.unseal("tampered")
[]
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from costa.store import FILE_MODE, private_dir

NONCE = 16
TAG = 16


@dataclass(frozen=True)
class Sealer:
    """Seals and opens lists of session ids with one server-side key."""

    key: bytes = field(repr=False)

    @classmethod
    def for_home(cls, home: Path) -> Sealer:
        """The sealer whose key is kept in `<home>/browser_secret` (made 0600 on first use)."""
        private_dir(Path(home))
        p = Path(home) / "browser_secret"
        if not p.exists():
            p.touch(mode=FILE_MODE)
            p.write_text(secrets.token_urlsafe(32), encoding="utf-8")
        p.chmod(FILE_MODE)
        return cls(p.read_text(encoding="utf-8").strip().encode())

    def _stream(self, nonce: bytes, n: int) -> bytes:
        out = b""
        counter = 0
        while len(out) < n:
            out += hmac.new(self.key, b"stream" + nonce + counter.to_bytes(4, "big"), hashlib.sha256).digest()
            counter += 1
        return out[:n]

    def seal(self, ids: list[str]) -> str:
        """An opaque token for `ids`."""
        data = json.dumps(ids).encode()
        nonce = secrets.token_bytes(NONCE)
        body = bytes(a ^ b for a, b in zip(data, self._stream(nonce, len(data)), strict=True))
        tag = hmac.new(self.key, b"tag" + nonce + body, hashlib.sha256).digest()[:TAG]
        return base64.urlsafe_b64encode(nonce + tag + body).decode()

    def unseal(self, token: object) -> list[str]:
        """The ids in a token this server sealed; [] for anything else (tampered, foreign, empty)."""
        if not isinstance(token, str) or not token:
            return []
        try:
            raw = base64.urlsafe_b64decode(token.encode())
        except (ValueError, TypeError):
            return []
        nonce, tag, body = raw[:NONCE], raw[NONCE : NONCE + TAG], raw[NONCE + TAG :]
        want = hmac.new(self.key, b"tag" + nonce + body, hashlib.sha256).digest()[:TAG]
        if len(nonce) != NONCE or not hmac.compare_digest(tag, want):
            return []
        data = bytes(a ^ b for a, b in zip(body, self._stream(nonce, len(body)), strict=True))
        try:
            ids = json.loads(data)
        except ValueError:
            return []
        return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []
