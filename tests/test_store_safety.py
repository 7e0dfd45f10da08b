"""The store never deletes a file it cannot prove it wrote, and refuses to open a database that is not sound.

Issue 21, defect 1 (an empty or missing costa.db made the next start delete every stored image) and defect 5 (a
damaged database opened as if nothing was wrong). Each test below failed before the store had an identity, journals
and an integrity check at open.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from costa.config import Settings
from costa.errors import StorageError
from costa.services import Services
from costa.session import SessionCore
from costa.store import Store
from costa.testing.calibration import fake_table
from costa.testing.tinyfs import can_mount, set_read_only, tiny_disk

ROOT = Path(__file__).resolve().parents[1]


def img(value: int) -> np.ndarray:
    rng = np.random.default_rng(value)
    return rng.integers(0, 255, (24, 32, 3), dtype=np.uint8)


def stored_files(home: Path) -> list[Path]:
    return sorted(p for p in (home / "sessions").glob("*/*") if p.is_file() and p.name != "journal.jsonl")


def filled(home: Path, n: int = 3) -> list[Path]:
    store = Store(home)
    s = store.create_session()
    for k in range(n):
        store.add_version(s.id, img(k), "turn", f"v{k}")
    return stored_files(home)


def start_app_core(home: Path) -> dict[str, int]:
    core = SessionCore(Services(Settings(calibration_table=fake_table(), home=home)))
    try:
        return core.start()
    finally:
        core.close()


@pytest.mark.parametrize("damage", ["deleted", "emptied", "deleted with its WAL"])
def test_a_missing_or_empty_database_refuses_to_start_and_deletes_nothing(tmp_path: Path, damage: str) -> None:
    home = tmp_path / "home"
    files = filled(home)
    assert len(files) == 3
    db = home / "costa.db"
    if damage == "emptied":
        db.write_bytes(b"")
    else:
        db.unlink()
        if damage == "deleted with its WAL":
            for p in home.glob("costa.db-*"):
                p.unlink()
    with pytest.raises(StorageError, match=r"missing or empty.*3 file.*store repair"):
        start_app_core(home)
    assert stored_files(home) == files  # nothing deleted
    assert (db.exists() and db.stat().st_size == 0) if damage == "emptied" else not db.exists()  # nothing touched


def test_a_damaged_database_is_refused_at_open_in_one_sentence_and_left_as_it_was(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = Store(home)
    s = store.create_session()
    for k in range(40):  # enough rows for several pages
        store.add_version(s.id, img(k), "turn", "x" * 300)
    db = sqlite3.connect(home / "costa.db")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    raw = bytearray((home / "costa.db").read_bytes())
    raw[4096 * 2 : 4096 * 3] = os.urandom(4096)  # one page overwritten
    (home / "costa.db").write_bytes(bytes(raw))
    with pytest.raises(StorageError) as err:
        start_app_core(home)
    message = str(err.value)
    assert "damaged" in message and "store repair" in message and "\n" not in message
    assert (home / "costa.db").read_bytes() == bytes(raw)


def test_a_database_of_another_store_is_refused(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    filled(a)
    filled(b)
    (a / "costa.db").write_bytes((b / "costa.db").read_bytes())
    for p in a.glob("costa.db-*"):
        p.unlink()
    with pytest.raises(StorageError, match="belongs to store"):
        Store(a)


def test_an_unknown_file_is_quarantined_never_deleted_and_a_killed_write_is_removed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    files = filled(home, 2)
    folder = files[0].parent
    stranger = folder / "holiday.jpg"
    stranger.write_bytes(b"the user's own file")
    # a write a killed process journalled but never committed: the journal proves it is costa's
    store = Store(home)
    dead = 2**22 + 12345  # no such process
    store.files.journal(folder, {"op": "write", "file": "leftover.webp", "t": 0, "pid": dead, "host": os.uname()[1]})
    (folder / "leftover.webp").write_bytes(b"half an image")
    found = start_app_core(home)
    assert found["quarantined"] == 1 and found["removed"] == 1
    assert not stranger.exists() and not (folder / "leftover.webp").exists()
    moved = list((home / "quarantine").rglob("holiday.jpg"))
    assert len(moved) == 1 and moved[0].read_bytes() == b"the user's own file"
    assert stored_files(home) == files  # every version's file kept


def test_a_write_journalled_by_a_live_process_is_left_alone(tmp_path: Path) -> None:
    home = tmp_path / "home"
    files = filled(home, 1)
    folder = files[0].parent
    store = Store(home)
    store.files.journal(
        folder, {"op": "write", "file": "inflight.webp", "t": 0, "pid": os.getppid(), "host": os.uname()[1]}
    )
    (folder / "inflight.webp").write_bytes(b"being written")
    assert store.recover()["removed"] == 0
    assert (folder / "inflight.webp").exists()


def test_every_connection_has_foreign_keys_on_including_the_observations(tmp_path: Path) -> None:
    from costa.subroutines.observations import ObservationLog

    store = Store(tmp_path)
    log = ObservationLog(store)
    with log._db() as db:
        assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    with store.connect() as db:
        assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_the_identity_is_in_the_database_and_beside_the_files(tmp_path: Path) -> None:
    store = Store(tmp_path)
    assert store.files.identity() == store.store_id and len(store.store_id) == 32
    with store.connect() as db:
        assert db.one("SELECT value FROM store_meta WHERE key = 'store_id'")["value"] == store.store_id
    assert Store(tmp_path).store_id == store.store_id


def run_app_until_exit(home: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COSTA_HOME": str(home), "COSTA_PORT": "1", "GRADIO_ANALYTICS_ENABLED": "False"}
    return subprocess.run(
        [sys.executable, "app.py"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_the_app_refuses_to_start_on_an_emptied_database_in_one_line_and_keeps_every_image(tmp_path: Path) -> None:
    home = tmp_path / "home"
    files = filled(home)
    (home / "costa.db").write_bytes(b"")
    for p in home.glob("costa.db-*"):
        p.unlink()
    r = run_app_until_exit(home)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-2000:]
    lines = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "store repair" in lines[0]
    assert stored_files(home) == files


@pytest.mark.skipif(not can_mount(), reason="needs root to mount a tmpfs (a real read-only file system)")
def test_the_app_refuses_a_read_only_home_in_one_line(tmp_path: Path) -> None:
    with tiny_disk(tmp_path / "disk", 8) as disk:
        filled(disk / "home")
        set_read_only(disk)
        r = run_app_until_exit(disk / "home")
        set_read_only(disk, False)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert "cannot be written" in r.stderr and "COSTA_HOME" in r.stderr


def test_tools_switched_off_are_routed_around_and_unknown_ids_are_named(tmp_path) -> None:
    """COSTA_TOOLS_OFF: the listed tools are not ready (the search never runs them); a misspelt id is refused."""
    from costa.config import Settings
    from costa.errors import InputError
    from costa.services import Services

    settings = Settings.from_env({"COSTA_HOME": str(tmp_path), "COSTA_TOOLS_OFF": "recolor_lab, remove_telea"})
    services = Services(settings)
    assert settings.tools_off == ("recolor_lab", "remove_telea")
    off = services.tables.tools["recolor_lab"]
    assert off.status == "planned" and "COSTA_TOOLS_OFF" in off.planned_reason
    assert services.tables.tools["recolor_hsv"].status == "ready"
    assert "recolor_lab" not in {t.id for t in services.tables.ready_tools()}
    with pytest.raises(InputError, match="recolor_lba"):
        Services(Settings.from_env({"COSTA_HOME": str(tmp_path), "COSTA_TOOLS_OFF": "recolor_lba"}))


def test_an_upload_keeps_its_own_file_when_exact_and_results_are_lossless_webp(tmp_path: Path) -> None:
    """Issue 21, defect 2 (a 7 MB noise JPEG became 146 MB of PNG): a JPEG upload is stored as its own bytes, an
    upload whose plain decode is not the pixels costa edits (an EXIF rotation) and every result as lossless WebP,
    each decoding to exactly the version's pixels."""
    import io

    from PIL import Image

    from costa.store import SourceFile, image_sha256
    from costa.store.files import decode

    photo = np.random.default_rng(0).integers(0, 256, (300, 400, 3), dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(photo).save(buf, "JPEG", quality=95)
    jpeg = buf.getvalue()
    pixels = decode(jpeg)  # what costa edits: the JPEG's own decode
    rotated = io.BytesIO()
    exif = Image.Exif()
    exif[0x0112] = 6  # "rotate 90° to view": what costa edits is the rotated image, not the plain decode
    Image.fromarray(photo).save(rotated, "JPEG", quality=95, exif=exif)
    store = Store(tmp_path)
    s = store.create_session()
    upload = store.add_upload(s.id, pixels, "upload", SourceFile(jpeg, "JPEG"), None)
    turned = np.ascontiguousarray(np.rot90(decode(rotated.getvalue()), -1))
    other = store.add_upload(s.id, turned, "upload", SourceFile(rotated.getvalue(), "JPEG"), upload.id)
    smooth = np.zeros((300, 400, 3), dtype=np.uint8)
    smooth[..., 0] = np.arange(400, dtype=np.uint8)[None, :] // 2  # a result: a smooth gradient
    result = store.add_version(s.id, smooth, "turn", "result", other.id)
    assert Path(upload.file).suffix == ".jpg" and Path(upload.file).read_bytes() == jpeg
    for v, image in ((other, turned), (result, smooth)):
        assert Path(v.file).suffix == ".webp", v.file
        assert image_sha256(decode(Path(v.file).read_bytes())) == image_sha256(image)
    png = io.BytesIO()
    Image.fromarray(smooth).save(png, "PNG", compress_level=3)
    assert Path(result.file).stat().st_size < 0.5 * len(png.getvalue())
