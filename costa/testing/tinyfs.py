"""FAKE storage faults for tests and `bench faults`: a real tmpfs of a few megabytes (a disk that fills up) that can
be remounted read-only, so the store meets the operating system's own ENOSPC and EROFS. Needs root (mount)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def can_mount() -> bool:
    """Whether this process may mount a tmpfs (root with the capability, as in CI containers)."""
    return hasattr(os, "geteuid") and os.geteuid() == 0 and Path("/proc/mounts").is_file()


def _mount(args: list[str]) -> None:
    r = subprocess.run(["mount", *args], capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        raise OSError(f"mount {' '.join(args)}: {r.stderr.strip()}")


@contextmanager
def tiny_disk(where: Path, megabytes: float) -> Iterator[Path]:
    """A tmpfs of `megabytes` mounted at `where` for the duration (unmounted after, even on error)."""
    where.mkdir(parents=True, exist_ok=True)
    _mount(["-t", "tmpfs", "-o", f"size={int(megabytes * 1024)}k,mode=0700", "tmpfs", str(where)])
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, timeout=30)


def set_read_only(where: Path, read_only: bool = True) -> None:
    """Remount the tiny disk at `where` read-only (or writable again)."""
    _mount(["-o", f"remount,{'ro' if read_only else 'rw'}", str(where)])


def fill(where: Path) -> Path:
    """Fill the disk at `where` to the last byte (returns the filler file; delete it to free the space)."""
    filler = where / "filler.bin"
    with open(filler, "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 65536)
        except OSError:
            pass
        try:
            while True:
                f.write(b"\0" * 512)
        except OSError:
            pass
    return filler
