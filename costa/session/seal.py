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
import os
import secrets
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from costa.errors import InputError
from costa.store import FILE_MODE, private_dir

NONCE = 16
TAG = 16


@dataclass(frozen=True)
class Sealer:
    """Seals and opens lists of session ids with one server-side key."""

    key: bytes = field(repr=False)

    @classmethod
    def for_home(cls, home: Path) -> Sealer:
        """The sealer whose key is kept in `<home>/browser_secret` (made 0600 on first use).

        Replicas sharing one home often start together: the key is written whole to a file of its own and then
        linked into place, which fails for all but the first, so every replica reads the one key that won (before,
        a replica could read the file another had just created and not yet filled, and seal with an empty key,
        whose tokens anyone can forge and the other replicas cannot open).

        Raises:
            InputError: the key file is empty or unreadable as text (a damaged home: refused, never an empty key).
        """
        private_dir(Path(home))
        p = Path(home) / "browser_secret"
        if not p.exists():
            fd, tmp = tempfile.mkstemp(prefix=".browser_secret-", dir=home)
            try:
                with os.fdopen(fd, "wb") as f:
                    os.fchmod(f.fileno(), FILE_MODE)
                    f.write(secrets.token_urlsafe(32).encode())
                    f.flush()
                    os.fsync(f.fileno())
                os.link(tmp, p)  # atomic; FileExistsError when another replica's key won
            except FileExistsError:
                pass
            finally:
                os.unlink(tmp)
        p.chmod(FILE_MODE)
        key = p.read_text(encoding="utf-8").strip().encode()
        if not key:
            raise InputError(f"{p} is empty: delete it to make a new key (browsers then start new sessions)")
        return cls(key)

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
