"""Probes of `bench faults` for issue 21's ten defects, each through the real interface (a live `python app.py`, its
API by `gradio_client` and HTTP, its start-up as a subprocess), each returning held / FAILED with what it saw.

 1. **emptied database**: an emptied, then a missing `costa.db` beside stored images: the app refuses to start in one
    line and every image file is still there.
 2. **growth**: an upload with a turn that keeps no version ("hello there") stores nothing; a flat 6300² PNG over the
    per-turn pixel budget is refused naming the budget; one client past the rate limit is refused with a message
    while another client is not; bytes stored per version for a 7 MB noise JPEG.
 3. **surrogates**: a lone surrogate in the instruction, session id, comment or evaluator is refused whole.
 4. **storage faults**: COSTA_HOME on a real tmpfs (`costa.testing.tinyfs`, needs root) that fills during an
    export (no half-written file, the earlier export unchanged), then fills up, then goes read-only: a write is
    refused in one sentence naming the disk, `/history` keeps answering.
 5. **integrity**: a version whose file was deleted: export, redo and edit answer in one sentence naming the lost
    version; a database with one page overwritten: the app refuses to start in one line.
 6. **undo vs edit**: another client loops undo / redo while edits with uploads run: no edit is refused as busy; an
    undo during a turn is refused naming the turn.
 7. **huge ids**: `/branch` and `/score` with ids 1e300, 2**63, -1: a short refusal, no traceback in the log.
 8. **exports**: control and bidi characters escaped in README.txt, the rerun line shell-quoted, formula cells in
    scores.csv prefixed.
 9. **image modes**: float32 TIFF in [0, 1], 16-bit and CMYK TIFFs: converted with a note, not black.
10. **owner-only files**: with login on, another user cannot download a session's edit or undo result by its URL.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from bench.app import sign_image
from bench.faults import REPLACE, LiveApp, Probe, _hist, _short

#: Probe names in the order `bench faults` runs them (`--only` takes these).
DEFECT_PROBES = (
    "emptied database",
    "growth",
    "surrogates",
    "storage faults",
    "integrity",
    "undo vs edit",
    "huge ids",
    "exports",
    "image modes",
    "owner-only files",
)


def _refused(fn: Callable[[], Any]) -> str | None:
    """The first line of the refusal `fn` raised, or None when it was accepted."""
    try:
        fn()
    except Exception as e:
        return _short(e) or type(e).__name__
    return None


def _clear(msg: str | None) -> bool:
    """A refusal a person can read: present, one short sentence, not an internal error."""
    return bool(msg) and "internal error" not in str(msg).lower() and "Traceback" not in str(msg)


def _edit(c: Any, sid: str, path: Path | None, text: str = REPLACE) -> Any:
    """An edit as a user makes it: a proposed result (passed, not verified on real photos) is accepted."""
    from gradio_client import handle_file

    image, report = c.predict(sid, handle_file(str(path)) if path else None, text, 1.0, 0.8, "", "", api_name="/edit")
    if isinstance(report, dict) and report.get("status") == "proposed":
        image, _ = c.predict(sid, api_name="/accept")
    return image, report


def _start_exit(home: Path, app_dir: Path, timeout_s: float = 60) -> subprocess.CompletedProcess[str]:
    """`python app.py` on `home`, expected to exit by itself (killed after `timeout_s`)."""
    env = {**os.environ, "COSTA_HOME": str(home), "COSTA_PORT": "1", "GRADIO_ANALYTICS_ENABLED": "False"}
    env.pop("OPENAI_BASE_URL", None)
    try:
        return subprocess.run(
            [sys.executable, "app.py"], cwd=app_dir, env=env, capture_output=True, text=True, timeout=timeout_s
        )
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(e.cmd, -9, str(e.stdout or ""), "did not exit: it started")


def _one_line_exit(r: subprocess.CompletedProcess[str]) -> str | None:
    """What is wrong with a refused start (None: it exited non-zero with one line and no traceback)."""
    lines = [ln for ln in r.stderr.strip().splitlines() if ln.strip()]
    if r.returncode == 0 or r.returncode == -9:
        return f"exit {r.returncode} ({(lines or ['started'])[-1][:80]})"
    if "Traceback" in r.stderr:
        return f"exit {r.returncode} with a traceback ({lines[-1][:80]})"
    return None


#: Suffixes of stored image files (results are WebP or PNG; uploads keep their own format when it is lossless).
IMAGE_SUFFIXES = (".png", ".webp", ".jpg", ".gif", ".bmp", ".tif")


def _image_files(home: Path) -> set[str]:
    return {str(p.relative_to(home)) for p in (home / "sessions").glob("*/*") if p.suffix in IMAGE_SUFFIXES}


# ------------------------------------------------------------------------------------------------------ 1 and 5


def probe_emptied_database(app: LiveApp, folder: Path) -> Probe:
    """Stop the app, empty / remove its database, start it: refused in one line, every image file kept."""
    c = app.client()
    sid = c.predict(api_name="/new_session")
    _edit(c, sid, sign_image(folder / "db1.png", (220, 210, 190)))
    app.stop()
    bad: list[str] = []
    db = app.home / "costa.db"
    keep = folder / "costa.db.keep"
    keep.write_bytes(db.read_bytes())
    files = _image_files(app.home)
    try:
        for damage in ("emptied", "missing"):
            db.write_bytes(b"") if damage == "emptied" else db.unlink()
            wrong = _one_line_exit(_start_exit(app.home, app.app_dir))
            if wrong:
                bad.append(f"{damage} costa.db: {wrong}")
            lost = files - _image_files(app.home)
            if lost:
                bad.append(f"{damage} costa.db: {len(lost)} of {len(files)} image files deleted")
    finally:
        db.write_bytes(keep.read_bytes())
        for side in ("costa.db-wal", "costa.db-shm"):
            (app.home / side).unlink(missing_ok=True)
        app.start()
    return Probe("emptied database", not bad, "; ".join(bad) or f"refused in one line twice; {len(files)} files kept")


def probe_integrity(app: LiveApp, folder: Path) -> Probe:
    """A deleted version file, then one overwritten database page (see the module docstring)."""
    c = app.client()
    sid = c.predict(api_name="/new_session")
    _edit(c, sid, sign_image(folder / "int1.png", (200, 220, 230)))
    _edit(c, sid, None, "make it brighter")
    h = c.predict(sid, api_name="/history")
    head = next(v for v in h["versions"] if v["id"] == h["head"])
    home = app.home
    stored = [p for p in (home / "sessions").glob("*/*") if p.stem.startswith(head["sha256"][:16])]
    bad: list[str] = []
    if not stored:
        return Probe("integrity", False, f"could not find the head version's file ({head['sha256'][:12]})")
    kept = stored[0].read_bytes()
    stored[0].unlink()
    msgs = {
        "export": _refused(lambda: c.predict(sid, api_name="/export")),
        "edit": _refused(lambda: _edit(c, sid, None, "make the image darker")),
    }
    c.predict(sid, api_name="/undo")
    msgs["redo"] = _refused(lambda: c.predict(sid, api_name="/redo"))
    stored[0].write_bytes(kept)  # put back: the closing audit counts only what the app lost
    stored[0].chmod(0o600)
    for name, msg in msgs.items():
        if not _clear(msg) or "FileNotFoundError" in str(msg):
            bad.append(f"{name} with the head's file deleted: {msg or 'accepted'}")
    app.stop()
    db = home / "costa.db"
    keep = folder / "costa.db.int"
    keep.write_bytes(db.read_bytes())
    try:
        raw = bytearray(db.read_bytes())
        page = int.from_bytes(raw[16:18], "big") or 65536
        raw[page : 2 * page] = os.urandom(page)  # page 2: a table's root
        db.write_bytes(bytes(raw))
        wrong = _one_line_exit(_start_exit(home, app.app_dir))
        if wrong:
            bad.append(f"one page overwritten: {wrong}")
    finally:
        db.write_bytes(keep.read_bytes())
        app.start()
    return Probe("integrity", not bad, "; ".join(bad) or "lost file named in one sentence; damaged page refused")


# ------------------------------------------------------------------------------------------------------------ 2


def noise_jpeg(path: Path, side: int = 2600) -> Path:
    """A JPEG of random noise of about 7 MB (the worst case for lossless storage)."""
    rng = np.random.default_rng(0)
    Image.fromarray(rng.integers(0, 256, (side, side, 3), dtype=np.uint8)).save(path, quality=95)
    return path


def probe_growth(app: LiveApp, folder: Path, limited: LiveApp | None = None) -> Probe:
    """Uploads kept only with a version, the pixel budget named, the rate limit per client, bytes per version.

    `limited` is an app started with a low COSTA_RATE_LIMIT (the rate part is skipped without one)."""
    c = app.client()
    sid = c.predict(api_name="/new_session")
    bad: list[str] = []
    before = _hist(c, sid)
    for i in range(3):
        _refused(partial(_edit, c, sid, sign_image(folder / f"hello{i}.png", (200, 100 + i, 90)), "hello there"))
    after = _hist(c, sid)
    if len(after[1]) != len(before[1]):
        bad.append(f"3 'hello there' uploads stored {len(after[1]) - len(before[1])} versions")
    flat = folder / "flat6300.png"
    Image.new("RGB", (6300, 6300), (120, 130, 140)).save(flat)
    t0 = time.perf_counter()
    msg = _refused(lambda: _edit(c, sid, flat, "make it brighter"))
    took = time.perf_counter() - t0
    if not msg or "megapixel" not in msg.lower():
        bad.append(f"a flat 6300² PNG: {msg or f'accepted, a {took:.0f}-s turn'} (no pixel budget named)")
    jpeg = noise_jpeg(folder / "noise.jpg")
    sid2 = c.predict(api_name="/new_session")
    _edit(c, sid2, jpeg, "make it brighter")
    h = c.predict(sid2, api_name="/history")
    session_dirs = [p for p in (app.home / "sessions").glob("*") if p.is_dir()]
    newest = max(session_dirs, key=lambda p: p.stat().st_mtime)
    stored = sum(p.stat().st_size for p in newest.iterdir() if p.suffix in IMAGE_SUFFIXES)
    per_version = stored / max(1, len(h["versions"]))
    detail = f"7 MB noise JPEG ({jpeg.stat().st_size / 1e6:.1f} MB): {per_version / 1e6:.1f} MB per version"
    if limited is not None:
        import httpx

        crowd = limited.client()
        refusals = [m for m in (_refused(lambda: crowd.predict(api_name="/new_session")) for _ in range(40)) if m]
        if not refusals:
            bad.append("40 /new_session calls at once from one client: none refused")
        elif not all(_clear(m) and "too many" in m.lower() for m in refusals):
            bad.append(f"rate refusal unclear: {refusals[0]}")
        with httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.2")) as other:  # another address
            status = other.post(limited.url + "gradio_api/call/new_session", json={"data": []}, timeout=30).status_code
        if status != 200:
            bad.append(f"another client (from 127.0.0.2) was refused too: HTTP {status}")
        detail += f"; {len(refusals)} of 40 rapid calls from one client refused, another client served"
    return Probe("growth", not bad, "; ".join([*bad, detail]))


# ------------------------------------------------------------------------------------------------------------ 3


def _raw(url: str, api: str, data: list[Any]) -> str | None:
    """Call a named endpoint by plain HTTP with the JSON escaped as ASCII (a lone surrogate travels as `\\ud800`,
    which gradio_client cannot even send); the error's message, or None when it succeeded."""
    import requests

    body = json.dumps({"data": data}).encode()
    r = requests.post(url + f"gradio_api/call/{api}", data=body, headers={"content-type": "application/json"},
                      timeout=30)  # fmt: skip
    if r.status_code != 200:
        return f"HTTP {r.status_code}: {r.text[:80]}"
    stream = requests.get(url + f"gradio_api/call/{api}/{r.json()['event_id']}", timeout=120).text
    if "event: error" not in stream:
        return None
    payload = stream.split("event: error", 1)[1].split("data:", 1)[-1].strip().splitlines()[0]
    try:
        found = json.loads(payload)
    except ValueError:
        return payload or "error"
    return str(found.get("error") if isinstance(found, dict) else found) or "error"


def probe_surrogates(app: LiveApp, folder: Path) -> Probe:
    """A lone surrogate in each text field, by plain HTTP (see `_raw`), with an upload for the instruction."""
    import requests

    c = app.client()
    sid = c.predict(api_name="/new_session")
    sign = sign_image(folder / "sur.png", (230, 200, 200))
    _edit(c, sid, sign)
    turn = c.predict(sid, api_name="/history")["turns"][-1]["id"]
    before = _hist(c, sid)
    up = requests.post(app.url + "gradio_api/upload", files={"files": ("sur.png", sign.read_bytes())}, timeout=30)
    upload = {"path": up.json()[0], "meta": {"_type": "gradio.FileData"}}
    url, text = app.url, "make it \ud800 brighter"
    cases: dict[str, Callable[[], Any]] = {
        "instruction": lambda: _raw(url, "edit", [sid, upload, text, 1.0, 0.8, "", "", None, None]),
        "session id": lambda: _raw(url, "history", ["\udfff" + sid]),
        "comment": lambda: _raw(url, "score", [sid, turn, "s1", 1.0, "fine \ud83d", "x"]),
        "evaluator": lambda: _raw(url, "score", [sid, turn, "s1", 1.0, "fine", "\udc00bob"]),
    }
    bad = []
    log_before = len(app.log())
    for name, fn in cases.items():
        msg = fn()
        if not _clear(msg) or "UnicodeEncodeError" in str(msg) or str(msg).startswith("HTTP"):
            bad.append(f"{name}: {msg or 'accepted'}")
    if _hist(c, sid) != before:
        bad.append(f"history changed ({len(_hist(c, sid)[1]) - len(before[1])} versions stored)")
    tracebacks = app.log()[log_before:].count("Traceback")
    if tracebacks:
        bad.append(f"{tracebacks} traceback(s) in the log")
    return Probe("surrogates", not bad, "; ".join(bad) or f"{len(cases)} refused whole, history unchanged")


# ------------------------------------------------------------------------------------------------------------ 4


def _export_files(home: Path) -> dict[str, bytes]:
    """Every exported file under `home`'s temporary folders (Gradio's cache left out), by path."""
    return {
        str(p.relative_to(home)): p.read_bytes()
        for p in (home / "tmp").glob("run-*/*/*")
        if p.is_file() and not p.parent.parent.name.endswith("-gradio")
    }


def _export_nearly_full(c: Any, sid: str, disk: Path, home: Path, folder: Path) -> list[str]:
    """Export, add a version, fill the disk but for three versions' worth (the new export fits, Gradio's copy of it
    to serve it does not), export again: one sentence, the first export's files unchanged, nothing half-written."""
    from costa.testing.tinyfs import fill

    noise = folder / "full-noise.png"
    Image.fromarray(np.random.default_rng(1).integers(40, 180, (600, 600, 3), dtype=np.uint8)).save(noise)
    _edit(c, sid, noise, "make the image brighter")
    c.predict(sid, api_name="/export")
    shown = _export_files(home)
    _edit(c, sid, None, "make the image darker")
    filler = fill(disk)
    os.truncate(filler, filler.stat().st_size - 3 * noise.stat().st_size)
    msg = _refused(lambda: c.predict(sid, api_name="/export"))
    after = _export_files(home)
    filler.unlink()
    bad = []
    if msg is None or not _clear(msg) or "COSTA_HOME" not in msg:
        bad.append(f"export with the disk filling during it: {msg or 'accepted'}")
    if after != shown:
        changed = sorted(set(after) ^ set(shown) | {k for k in set(after) & set(shown) if after[k] != shown[k]})
        bad.append(f"export with the disk filling during it: {len(changed)} exported file(s) left or changed")
    return bad


def probe_storage_faults(app_dir: Path, folder: Path) -> Probe:
    """A home on a tmpfs that fills up, then goes read-only (see the module docstring); needs root."""
    import requests

    from costa.testing.tinyfs import can_mount, fill, set_read_only, tiny_disk

    if not can_mount():
        return Probe("storage faults", True, "skipped: mounting a tmpfs needs root")
    bad: list[str] = []
    with tiny_disk(folder / "disk", 24) as disk:
        app = LiveApp(disk / "home", app_dir, {"COSTA_RATE_LIMIT": "0"}, log_file=folder / "tiny-app.log")
        app.start()
        try:
            c = app.client()
            sid = c.predict(api_name="/new_session")
            _edit(c, sid, sign_image(folder / "full0.png", (180, 200, 220)))
            bad += _export_nearly_full(c, sid, disk, app.home, folder)
            fill(disk)
            for state in ("full", "read-only"):
                if state == "read-only":
                    (disk / "filler.bin").unlink()
                    try:
                        set_read_only(disk)
                    except OSError:
                        bad.append("the app left a file open on the disk after it filled (it cannot go read-only)")
                        break
                img = sign_image(folder / f"full-{state}.png", (100, 200, 220))
                msgs = {
                    "edit": _refused(partial(_edit, c, sid, img)),
                    "new_session": _refused(lambda: c.predict(api_name="/new_session")),
                    "history": _refused(lambda: c.predict(sid, api_name="/history")),
                }
                raw = requests.post(app.url + "gradio_api/upload", files={"files": img.read_bytes()}, timeout=30)
                if raw.status_code == 200 or "COSTA_HOME" not in raw.text:
                    bad.append(f"{state}: an upload answered HTTP {raw.status_code} ({raw.text[:60]!r})")
                if msgs["history"] is not None:
                    bad.append(f"{state}: /history failed ({msgs['history']})")
                for name in ("edit", "new_session"):
                    m = msgs[name]
                    if m is not None and (not _clear(m) or not ("COSTA_HOME" in m or "507" in m)):
                        bad.append(f"{state}: {name}: {m}")
                if msgs["edit"] is None:
                    bad.append(f"{state}: an edit with an upload was accepted")
        finally:
            app.stop()
            set_read_only(disk, False)
    return Probe(
        "storage faults",
        not bad,
        "; ".join(bad) or "disk full during an export, full, read-only: one sentence; no partial file; reads kept",
    )


# ------------------------------------------------------------------------------------------------------------ 6


def probe_undo_vs_edit(app: LiveApp, folder: Path, edits: int = 6) -> Probe:
    c = app.client()
    sid = c.predict(api_name="/new_session")
    _edit(c, sid, sign_image(folder / "uv0.png", (240, 230, 200)))
    _edit(c, sid, None, "make it brighter")
    done = threading.Event()
    history_refusals: list[str] = []

    def loop() -> None:
        other = app.client()
        while not done.is_set():
            for api in ("/undo", "/redo"):
                m = _refused(partial(other.predict, sid, api_name=api))
                if m and "nothing to" not in m.lower():
                    history_refusals.append(m)

    t = threading.Thread(target=loop)
    t.start()
    refused: list[str] = []
    try:
        for i in range(edits):
            m = _refused(partial(_edit, c, sid, sign_image(folder / f"uv{i}.png", (200, 90 + 20 * i, 120))))
            if m:
                refused.append(m)
    finally:
        done.set()
        t.join()
    bad = [f"{len(refused)} of {edits} edits refused ({refused[0]})"] if refused else []
    unclear = [m for m in history_refusals if "turn" not in m.lower() or not _clear(m)]
    if unclear:
        bad.append(f"undo/redo refused without naming the turn: {unclear[0]}")
    ran = edits - len(refused)
    detail = f"{edits} edits while undo/redo looped: {ran} ran; undo/redo refused {len(history_refusals)}"
    return Probe("undo vs edit", not bad, "; ".join([*bad, detail]))


# ------------------------------------------------------------------------------------------------------------ 7


def probe_huge_ids(app: LiveApp, folder: Path) -> Probe:
    c = app.client()
    sid = c.predict(api_name="/new_session")
    _edit(c, sid, sign_image(folder / "ids.png", (210, 230, 210)))
    before = _hist(c, sid)
    log_before = len(app.log())
    bad = []
    for value in (1e300, 2**63, -1, 1.5):
        for api, fn in (
            ("branch", lambda v=value: c.predict(sid, v, api_name="/branch")),
            ("score", lambda v=value: c.predict(sid, v, "s1", 1.0, "", "x", api_name="/score")),
        ):
            msg = _refused(fn)
            if not _clear(msg) or "OverflowError" in str(msg):
                bad.append(f"/{api} {value:g}: {msg or 'accepted'}")
    if _hist(c, sid) != before:
        bad.append("history changed")
    tracebacks = app.log()[log_before:].count("Traceback")
    if tracebacks:
        bad.append(f"{tracebacks} traceback(s) in the log")
    return Probe("huge ids", not bad, "; ".join(bad) or "8 out-of-range ids refused in a sentence")


# ------------------------------------------------------------------------------------------------------------ 8


def probe_exports(app: LiveApp, folder: Path) -> Probe:
    c = app.client()
    sid = c.predict(api_name="/new_session")
    nasty = "brighten the image. \x1b[2J\x07\r\u202e --events=/etc/x $(id)"
    _refused(lambda: _edit(c, sid, sign_image(folder / "exp.png", (230, 220, 180)), nasty))
    h = c.predict(sid, api_name="/history")
    bad = []
    if not h["turns"]:
        return Probe("exports", False, "the instruction was not run")
    turn = h["turns"][-1]["id"]
    c.predict(sid, turn, "s1", 1.0, '=HYPERLINK("http://x")', "+cmd", api_name="/score")
    _, bundle = c.predict(sid, api_name="/export")
    with zipfile.ZipFile(bundle) as z:
        names = z.namelist()
        readme = z.read(next(n for n in names if n.endswith("README.txt"))).decode()
        csv_name = next((n for n in names if n.endswith("scores.csv")), None)
        csv = z.read(csv_name).decode() if csv_name else ""
    raw = [ch for ch in ("\x1b", "\x07", "\r", "\u202e") if ch in readme]
    if raw:
        bad.append(f"README.txt keeps raw {[hex(ord(ch)) for ch in raw]}")
    reruns = [ln for ln in readme.splitlines() if "costa edit" in ln]
    for ln in reruns:
        try:
            args = shlex.split(ln[ln.index("costa edit") :])
        except ValueError as e:  # an unbalanced quote: the line was not shell-quoted
            bad.append(f"the rerun line is not valid shell ({e})")
            continue
        if any(a.startswith("--events=/etc") for a in args):
            bad.append("the instruction became a flag of the rerun line")
    if not reruns:
        bad.append("no rerun line")
    cells = [cell for row in csv.splitlines()[1:] for cell in row.split(",")]
    if any(cell.lstrip('"').startswith(("=", "+", "@")) for cell in cells):
        bad.append("scores.csv has a cell that starts a formula")
    return Probe("exports", not bad, "; ".join(bad) or "controls escaped, rerun line quoted, formulas prefixed")


# ------------------------------------------------------------------------------------------------------------ 9


def mode_files(folder: Path) -> dict[str, Path]:
    """A float32 TIFF in [0, 1], a 16-bit grey and RGB TIFF, a CMYK TIFF, each a mid-grey gradient."""
    import tifffile

    ramp = np.linspace(0.2, 0.8, 256, dtype=np.float32)[None, :].repeat(128, 0)
    out = {
        "float32 TIFF": folder / "f32.tif",
        "16-bit grey TIFF": folder / "g16.tif",
        "16-bit RGB TIFF": folder / "rgb16.tif",
        "CMYK TIFF": folder / "cmyk.tif",
    }
    tifffile.imwrite(out["float32 TIFF"], np.dstack([ramp] * 3))
    tifffile.imwrite(out["16-bit grey TIFF"], (ramp * 65535).astype(np.uint16))
    tifffile.imwrite(out["16-bit RGB TIFF"], (np.dstack([ramp] * 3) * 65535).astype(np.uint16), photometric="rgb")
    Image.fromarray((np.dstack([ramp] * 3) * 255).astype(np.uint8)).convert("CMYK").save(out["CMYK TIFF"])
    return out


def probe_image_modes(app: LiveApp, folder: Path) -> Probe:
    c = app.client()
    bad, seen = [], []
    for name, path in mode_files(folder).items():
        sid = c.predict(api_name="/new_session")
        try:
            image, rep = _edit(c, sid, path, "make it brighter")
        except Exception as e:
            bad.append(f"{name}: refused ({_short(e)})")
            continue
        h = c.predict(sid, api_name="/history")
        upload = next((v for v in h["versions"] if v["kind"] == "upload"), None)
        mean = float(np.asarray(Image.open(image).convert("L")).mean()) if image else -1.0
        notes = " ".join(rep.get("notes", []))
        if mean < 60:
            bad.append(f"{name}: came out black (mean {mean:.0f})")
        if not notes:
            bad.append(f"{name}: no note")
        seen.append(f"{name} mean {mean:.0f}")
        if upload is None:
            bad.append(f"{name}: no upload version")
    return Probe("image modes", not bad, "; ".join(bad) or "; ".join(seen) + "; each with a note")


# ----------------------------------------------------------------------------------------------------------- 10


def _call(s: Any, url: str, api: str, data: list[Any]) -> list[Any]:
    event = s.post(url + f"gradio_api/call/{api}", json={"data": data}, timeout=10).json()["event_id"]
    stream = s.get(url + f"gradio_api/call/{api}/{event}", timeout=120).text
    payload = stream.split("data:")[-1].strip().splitlines()[0]
    return json.loads(payload) if payload.startswith("[") else []


def probe_owner_files(app: LiveApp, folder: Path) -> Probe:
    """With login on (the app restarted with COSTA_AUTH), bob fetches alice's edit and undo results by URL."""
    import requests

    restart = "COSTA_AUTH" not in app.env
    if restart:
        app.stop()
        app.env["COSTA_AUTH"] = "alice:pw-a,bob:pw-b"
        app.start()
    alice = app.client(("alice", "pw-a"))
    sid = alice.predict(api_name="/new_session")
    _edit(alice, sid, sign_image(folder / "own.png", (10, 120, 90)))
    _edit(alice, sid, None, "make it brighter")
    s_alice, s_bob = requests.Session(), requests.Session()
    for s, (u, p) in ((s_alice, ("alice", "pw-a")), (s_bob, ("bob", "pw-b"))):
        s.post(app.url + "login", data={"username": u, "password": p}, timeout=10)
    urls: dict[str, str] = {}
    for api in ("undo", "redo", "history"):
        out = _call(s_alice, app.url, api, [sid])
        if out and isinstance(out[0], dict) and out[0].get("url"):
            urls[api] = out[0]["url"]
    bad = []
    if not urls:
        bad.append("the undo / redo results returned no file URL")
    for api, u in urls.items():
        if s_bob.get(u, timeout=10).status_code == 200:
            bad.append(f"bob downloaded alice's {api} result by its URL")
        if s_alice.get(u, timeout=10).status_code != 200:
            bad.append(f"alice could not download her own {api} result")
    return Probe("owner-only files", not bad, "; ".join(bad) or f"{len(urls)} results served to their owner only")


def defect_probes(
    app: LiveApp, folder: Path, timed: Callable[[str, Callable[[], Any]], Any], limited: LiveApp | None = None
) -> None:
    """Run the probes of defects 1–9 through `timed` (bench faults' runner, which skips those `--only` leaves out);
    those that restart `app` leave it running as it was. `owner-only files` (10) runs after login is on."""
    timed("emptied database", lambda: probe_emptied_database(app, folder))
    timed("growth", lambda: probe_growth(app, folder, limited))
    timed("surrogates", lambda: probe_surrogates(app, folder))
    timed("storage faults", lambda: probe_storage_faults(app.app_dir, folder))
    timed("integrity", lambda: probe_integrity(app, folder))
    timed("undo vs edit", lambda: probe_undo_vs_edit(app, folder))
    timed("huge ids", lambda: probe_huge_ids(app, folder))
    timed("exports", lambda: probe_exports(app, folder))
    timed("image modes", lambda: probe_image_modes(app, folder))
