"""Version files under `COSTA_HOME/sessions/`: owner-only, written atomically, named by content, journalled.

Layout: `sessions/STORE` holds the store's identity (the same id as the database's `store_meta` row), and each
session has a folder named by a hash of its id (never the id, an access key) holding its image files and
`journal.jsonl`. The journal is the store's own account of the folder, appended before and after every write: a header
naming the store and the session, a `write` line before each file is written (so a file a killed process left behind
is provably costa's and may be removed) and a `version` line with the version's record once its row committed (so
`python -m costa store repair` can rebuild the index of versions from the files alone). A file that no journal line
and no database row accounts for is not costa's to delete: it is moved to `COSTA_HOME/quarantine/` and reported.

Formats: an upload is kept in its own file (a 7 MB JPEG stays 7 MB) when a plain decode of those bytes gives exactly
the pixels costa edits (no EXIF rotation, alpha or bit-depth conversion in between); results are lossless WebP (a
third smaller than PNG at the same speed, verified by decoding) or PNG past WebP's 16,383-pixel side.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import secrets
import socket
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from costa.errors import StorageError
from costa.store.database import DISK_FULL, os_fault

#: Folder and file modes for everything the store writes (owner only).
DIR_MODE, FILE_MODE = 0o700, 0o600
IDENTITY_FILE = "STORE"
JOURNAL_FILE = "journal.jsonl"
QUARANTINE_DIR = "quarantine"
#: Largest side lossless WebP can hold; larger results are PNG.
WEBP_MAX_SIDE = 16383
#: File extension of each format a version may be stored in (Pillow's format names).
EXTENSIONS = {"PNG": "png", "WEBP": "webp", "JPEG": "jpg", "GIF": "gif", "BMP": "bmp", "TIFF": "tif"}


def private_dir(path: Path) -> Path:
    """Create `path` (and parents) readable by the owner only; tighten it when it already exists."""
    try:
        path.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
        if path.stat().st_mode & 0o777 != DIR_MODE:
            path.chmod(DIR_MODE)
    except OSError as e:
        raise (os_fault(e) or e) from e
    return path


def session_folder_name(session_id: str) -> str:
    """The on-disk folder name of a session: a hash of its id, so listing a folder never reveals an access key."""
    return hashlib.sha256(session_id.encode()).hexdigest()[:24]


def image_sha256(image: np.ndarray) -> str:
    """Hash of the pixels and shape (not of a file encoding, which varies with the encoder)."""
    h = hashlib.sha256(f"{image.shape[0]}x{image.shape[1]}x{image.shape[2]}:".encode())
    h.update(np.ascontiguousarray(image).tobytes())
    return h.hexdigest()


@dataclass(frozen=True, eq=False)
class SourceFile:
    """The bytes an image was decoded from and their Pillow format (e.g. an upload: "JPEG")."""

    data: bytes
    format: str


@dataclass(frozen=True, eq=False)
class Encoded:
    """What a version's file will hold: its bytes, format, and the SHA-256 of the bytes."""

    data: bytes
    format: str

    @property
    def ext(self) -> str:
        return EXTENSIONS[self.format]

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


def decode(data: bytes) -> np.ndarray:
    """The RGB pixels of a stored file, decoded plainly (first frame, no rotation or flattening)."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as img:
        return np.ascontiguousarray(np.asarray(img.convert("RGB"), dtype=np.uint8))


def encode(image: np.ndarray, source: SourceFile | None = None) -> Encoded:
    """The file to store for `image`: `source`'s own bytes when they decode to exactly `image`, else lossless
    WebP (PNG past WebP's size limit); every encoding is decoded back and compared before it is used."""
    from PIL import Image

    digest = image_sha256(image)
    if source is not None and source.format in EXTENSIONS:
        try:
            if image_sha256(decode(source.data)) == digest:
                return Encoded(source.data, source.format)
        except (OSError, ValueError):
            pass  # not decodable plainly: re-encode
    h, w = image.shape[:2]
    buf = io.BytesIO()
    if max(h, w) <= WEBP_MAX_SIDE:
        Image.fromarray(image).save(buf, "WEBP", lossless=True, quality=0, method=0, exact=True)
        out = Encoded(buf.getvalue(), "WEBP")
        if image_sha256(decode(out.data)) == digest:
            return out
        buf = io.BytesIO()
    Image.fromarray(image).save(buf, "PNG", compress_level=3)
    return Encoded(buf.getvalue(), "PNG")


def part_target(name: str) -> str | None:
    """The file a temporary `write_atomic` name was for (".x.webp.1a2b3c4d.part" → "x.webp"), else None."""
    if name.startswith(".") and name.endswith(".part") and name.count(".") >= 3:
        return name[1:-5].rsplit(".", 1)[0]
    return None


def write_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` whole or not at all (a temporary name, flushed to disk, then renamed), owner-only.

    Raises:
        StorageError: the disk is full or read-only (nothing is left behind).
    """
    part = path.with_name(f".{path.name}.{secrets.token_hex(4)}.part")
    try:
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(part, path)
    except OSError as e:
        part.unlink(missing_ok=True)
        raise (os_fault(e) or e) from e


@contextmanager
def whole_files(paths: Sequence[Path], spare: int = 0) -> Iterator[tuple[Path, ...]]:
    """Temporary names beside `paths` to write in the block; when it ends they replace `paths` together, so a file
    already there (an export whose link is on screen) stays whole until its successor is complete. When the block
    or the renaming fails, or the disk would keep less than the written bytes plus `spare` free (room for a copy of
    them: Gradio copies every file it serves into its cache), every temporary file is removed.

    Raises:
        StorageError: the disk is full (also: too full for that copy) or read-only; nothing new is left behind.
    """
    parts = tuple(p.with_name(f".{p.name}.{secrets.token_hex(4)}.part") for p in paths)
    try:
        yield parts
        if spare:
            st = os.statvfs(parts[0].parent)
            if st.f_bavail * st.f_frsize < sum(p.stat().st_size for p in parts if p.exists()) + spare:
                raise StorageError(DISK_FULL)
        for part, path in zip(parts, paths, strict=True):
            if part.exists():
                os.replace(part, path)
    except OSError as e:
        raise (os_fault(e) or e) from e
    finally:
        for part in parts:
            part.unlink(missing_ok=True)


class FileStore:
    """The files of one store: identity, per-session folders and journals, quarantine."""

    def __init__(self, home: Path) -> None:
        self.home = Path(home)
        self.root = self.home / "sessions"

    # ------------------------------------------------------------------------------------------------ identity
    def identity(self) -> str | None:
        """The store id written beside the files (None: no identity file yet)."""
        p = self.root / IDENTITY_FILE
        if not p.is_file():
            return None
        try:
            return str(json.loads(p.read_text(encoding="utf-8"))["store_id"])
        except (OSError, ValueError, KeyError, TypeError):
            return "unreadable"

    def write_identity(self, store_id: str) -> None:
        private_dir(self.root)
        record = {"store_id": store_id, "created": time.time(), "what": "costa version files; see costa.store.files"}
        write_atomic(self.root / IDENTITY_FILE, (json.dumps(record) + "\n").encode())

    # ---------------------------------------------------------------------------------------------- folders
    def folder(self, session_id: str) -> Path:
        return self.root / session_folder_name(session_id)

    def relative(self, path: Path) -> str:
        """How the database names a file: relative to COSTA_HOME (so a moved or shared home still resolves)."""
        return path.relative_to(self.home).as_posix()

    def absolute(self, name: str) -> Path:
        p = Path(name)
        return p if p.is_absolute() else self.home / p

    def folders(self) -> Iterator[Path]:
        if self.root.is_dir():
            yield from sorted(p for p in self.root.iterdir() if p.is_dir())

    def stored_files(self, folder: Path) -> Iterator[Path]:
        """Every file in a session folder except its journal."""
        for p in sorted(folder.iterdir()):
            if p.is_file() and p.name != JOURNAL_FILE:
                yield p

    def count_files(self) -> int:
        return sum(1 for f in self.folders() for _ in self.stored_files(f))

    # ----------------------------------------------------------------------------------------------- journal
    def journal(self, folder: Path, record: Mapping[str, Any], header: Mapping[str, Any] | None = None) -> None:
        """Append one record to a session folder's journal (made, with `header` first, when new)."""
        private_dir(folder)
        path = folder / JOURNAL_FILE
        lines = [] if path.exists() or header is None else [json.dumps(dict(header), ensure_ascii=True)]
        lines.append(json.dumps(dict(record), ensure_ascii=True))
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE)
            with os.fdopen(fd, "a", encoding="ascii") as fh:
                fh.write("".join(line + "\n" for line in lines))
        except OSError as e:
            raise (os_fault(e) or e) from e

    def read_journal(self, folder: Path) -> list[dict[str, Any]]:
        """A folder's journal records, oldest first (a torn last line from a kill is skipped)."""
        path = folder / JOURNAL_FILE
        if not path.is_file():
            return []
        out = []
        for line in path.read_text(encoding="ascii", errors="replace").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict):
                out.append(rec)
        return out

    def write_file(self, folder: Path, name: str, data: bytes, header: Mapping[str, Any]) -> Path:
        """Journal the intent, then write `folder/name` atomically (kept when it exists: names are content hashes)."""
        intent = {"op": "write", "file": name, "t": time.time(), "pid": os.getpid(), "host": socket.gethostname()}
        self.journal(folder, intent, header)
        path = folder / name
        if not path.is_file() or path.stat().st_size != len(data):
            write_atomic(path, data)
        return path

    # -------------------------------------------------------------------------------------------- quarantine
    def quarantine(self, paths: list[Path]) -> Path | None:
        """Move files costa cannot account for to `COSTA_HOME/quarantine/<time>/…` (never deleted); return the
        folder, or None when there was nothing to move."""
        if not paths:
            return None
        target = private_dir(self.home / QUARANTINE_DIR / time.strftime("%Y%m%d-%H%M%S"))
        for p in paths:
            dest = target / p.relative_to(self.home)
            private_dir(dest.parent)
            try:
                os.replace(p, dest)
            except OSError as e:
                raise StorageError(f"could not move {p.name} to the quarantine: {e.strerror}") from e
        return target

    def quarantined(self) -> list[Path]:
        q = self.home / QUARANTINE_DIR
        return sorted(p for p in q.rglob("*") if p.is_file()) if q.is_dir() else []
