"""The app through its real interface: `python app.py` in a subprocess, driven with gradio_client.

Covers the named endpoints end to end (upload, edit, undo, branch, score, export), two clients at once, and the bad
inputs users send (corrupt, truncated, decompression bomb, animated, CMYK, 16-bit, an instruction while a turn runs,
undo with no history, a score for a turn that does not exist).
"""

from __future__ import annotations

import json
import threading
import urllib.request
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from costa.testing import hostile_files as bad_images
from tests.app_server import SECRET_KEY, UPLOAD_LIMIT_MB, AppServer
from tests.text_helpers import Line, background, draw

pytestmark = pytest.mark.slow
REPLACE = "replace the text 'SALE' with 'OPEN'"


def sign(path: Path, colour: tuple[int, int, int] = (238, 236, 228), size: tuple[int, int] = (480, 200)) -> Path:
    w, h = size
    scale = w / 480
    line = Line("SALE", (int(60 * scale), int(50 * scale)), int(64 * scale), (190, 20, 20))
    Image.fromarray(draw(background("flat", w, h, colour), [line])).save(path)
    return path


def client(server: AppServer):
    from gradio_client import Client

    return Client(server.url, verbose=False)


def edit(c, sid: str, image: Path | None, instruction: str = REPLACE, box: str = "", clicks: str = ""):
    from gradio_client import handle_file

    return c.predict(
        sid, handle_file(str(image)) if image else None, instruction, 1.0, 0.8, box, clicks, api_name="/edit"
    )


def test_edit_undo_branch_score_export(app_server: AppServer, tmp_path: Path) -> None:
    from costa.tools.ocr import RapidOcrReader

    c = client(app_server)
    sid = c.predict(api_name="/new_session")
    result, report = edit(c, sid, sign(tmp_path / "sign.png"))
    assert report["status"] == "done" and report["ok"], report["message"]
    assert any(line.startswith("chosen path: rapidocr_detect → text_replace_") for line in report["log"])
    assert report["subtasks"][0]["kind"] == "text_replacement" and report["calls"]
    text = " ".join(r.text for r in RapidOcrReader().read(np.asarray(Image.open(result).convert("RGB")))).upper()
    assert "OPEN" in text and "SALE" not in text

    history = c.predict(sid, api_name="/history")
    upload_v, first_v = (v["id"] for v in history["versions"])
    assert history["head"] == first_v and history["can_undo"]
    image, history = c.predict(sid, api_name="/undo")
    assert history["head"] == upload_v and history["can_redo"]
    # editing after undo starts a second branch; branching back keeps both futures
    _, second = edit(c, sid, None, "replace the text 'SALE' with 'SHUT'")
    assert second["status"] == "done"
    image, history = c.predict(sid, first_v, api_name="/branch")
    parents = {v["id"]: v["parent_id"] for v in history["versions"]}
    assert history["head"] == first_v and parents[first_v] == parents[second["version_id"]] == upload_v
    assert np.array_equal(np.asarray(Image.open(image).convert("RGB")), np.asarray(Image.open(result).convert("RGB")))

    acc = c.predict(sid, report["turn_id"], "s1", 0.7, "font differs", "ann", api_name="/score")
    acc = c.predict(sid, second["turn_id"], "s1", 1.0, "", "ann", api_name="/score")
    assert acc["tasks"] == {str(report["turn_id"]): 0.7, str(second["turn_id"]): 1.0} and acc["overall"] == 0.85
    csv_text = Path(c.predict(sid, api_name="/scores_csv")).read_text()
    assert "font differs" in csv_text and "task_accuracy" in csv_text

    image_file, bundle = c.predict(sid, api_name="/export")
    assert Image.open(image_file).size == (480, 200)
    with zipfile.ZipFile(bundle) as z:
        versions = json.loads(z.read("versions.json"))
        assert {v["id"] for v in versions} == set(parents) and all(len(v["sha256"]) == 64 for v in versions)
        assert f"turns/turn-{report['turn_id']}.json" in z.namelist() and "scores.csv" in z.namelist()
        assert SECRET_KEY not in z.read("manifest.json").decode()


def blob_scene(path: Path) -> tuple[Path, np.ndarray]:
    """A shaded green blob (centre 110,80, radius 40) on a blue background; returns the file and the blob's pixels."""
    yy, xx = np.mgrid[0:160, 0:220]
    img = np.full((160, 220, 3), (70, 110, 160), np.uint8)
    blob = np.hypot(xx - 110, yy - 80) <= 40
    shade = np.clip(1.1 - np.hypot(xx - 95, yy - 65) / 80.0, 0.4, 1.0)
    img[blob] = np.stack([60 * shade, 190 * shade, 70 * shade], -1)[blob].astype(np.uint8)
    Image.fromarray(img).save(path)
    return path, blob


def test_a_brush_mask_alone_points_at_the_object(app_server: AppServer, tmp_path: Path) -> None:
    from gradio_client import handle_file

    c = client(app_server)
    sid = c.predict(api_name="/new_session")
    scene, blob = blob_scene(tmp_path / "blob.png")
    yy, xx = np.mgrid[0:160, 0:220]
    painted = np.hypot(xx - 110, yy - 80) <= 42  # a brush stroke over the blob, a little past its edge
    Image.fromarray(np.where(painted, 255, 0).astype(np.uint8)).save(tmp_path / "mask.png")
    Image.fromarray(np.zeros((40, 50), np.uint8)).save(tmp_path / "small.png")
    Image.fromarray(np.zeros((160, 220), np.uint8)).save(tmp_path / "black.png")
    args = (1.0, 0.8, "", "")
    result, report = c.predict(
        sid,
        handle_file(str(scene)),
        "recolor the blob to pink",
        *args,
        handle_file(str(tmp_path / "mask.png")),
        api_name="/edit",
    )
    assert report["status"] == "done" and report["ok"], report["message"]
    assert "brush mask of" in report["region"] and report["subtasks"][0]["kind"] == "object_recoloration"
    before = np.asarray(Image.open(scene).convert("RGB")).astype(int)
    after = np.asarray(Image.open(result).convert("RGB")).astype(int)
    assert (after[blob, 0] > after[blob, 1]).mean() > 0.99  # green became pink inside
    far = np.hypot(xx - 110, yy - 80) > 50  # beyond the brush and its feathered edge
    assert np.array_equal(after[far], before[far])

    history = c.predict(sid, api_name="/history")
    for mask, message in (
        ("small.png", "brush mask is 50x40 but the current image is 220x160"),
        ("black.png", "brush mask is empty"),
    ):
        with pytest.raises(Exception, match=message) as e:
            c.predict(sid, None, "make it pink", *args, handle_file(str(tmp_path / mask)), api_name="/edit")
        assert "Traceback" not in str(e.value)
    assert c.predict(sid, api_name="/history") == history  # nothing lost, nothing added


def test_two_clients_at_once_see_only_their_own_history(app_server: AppServer, tmp_path: Path) -> None:
    colours = [(236, 200, 200), (200, 236, 200)]
    results: dict[int, tuple] = {}
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            c = client(app_server)
            sid = c.predict(api_name="/new_session")
            made = []
            for k in range(2):
                instruction = REPLACE if k == 0 else "replace the text 'OPEN' with 'SALE'"
                image, report = edit(c, sid, sign(tmp_path / f"c{i}.png", colours[i]) if k == 0 else None, instruction)
                assert report["status"] == "done", report["message"]
                made.append(report["version_id"])
                corner = np.asarray(Image.open(image).convert("RGB"))[:4, :4].reshape(-1, 3).mean(0)
                assert np.abs(corner - colours[i]).max() <= 2  # this client's own picture, not the other's
            results[i] = (sid, made, c.predict(sid, api_name="/history"))
        except BaseException as e:  # surfaced in the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    (sid_a, made_a, hist_a), (sid_b, made_b, hist_b) = results[0], results[1]
    assert sid_a != sid_b
    ids_a = {v["id"] for v in hist_a["versions"]}
    ids_b = {v["id"] for v in hist_b["versions"]}
    assert not ids_a & ids_b and set(made_a) <= ids_a and set(made_b) <= ids_b
    assert len(hist_a["turns"]) == len(hist_b["turns"]) == 2


def test_bad_uploads_are_short_messages_and_nothing_is_lost(app_server: AppServer, tmp_path: Path) -> None:
    c = client(app_server)
    sid = c.predict(api_name="/new_session")
    edit(c, sid, sign(tmp_path / "sign.png"))
    before = c.predict(sid, api_name="/history")
    for make, message in (
        (bad_images.corrupt_png, "not an image costa can read"),
        (bad_images.truncated_png, "corrupt or truncated"),
        (bad_images.bomb_png, r"more pixels than the limit of .* \(COSTA_MAX_PIXELS\)"),
    ):
        with pytest.raises(Exception, match=message) as e:
            edit(c, sid, make(tmp_path / "bad.png"))
        assert "Traceback" not in str(e.value) and str(tmp_path) not in str(e.value)
    assert c.predict(sid, api_name="/history") == before
    big = tmp_path / "big.png"
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (1200, 1200, 3), dtype=np.uint8)).save(big)
    assert big.stat().st_size > UPLOAD_LIMIT_MB * 1024 * 1024
    with pytest.raises(Exception, match=r"(?i)exceeds the maximum|too large|limit") as e:
        edit(c, sid, big)
    assert "Traceback" not in str(e.value)
    assert c.predict(sid, api_name="/history") == before


@pytest.mark.parametrize(
    ("make", "name", "note"),
    [
        (bad_images.animated_gif, "anim.gif", "first frame"),
        (bad_images.cmyk_jpeg, "cmyk.jpg", "CMYK"),
        (bad_images.png16, "deep.png", "16 bits"),
    ],
)
def test_unusual_images_are_edited_with_a_note(app_server: AppServer, tmp_path: Path, make, name, note) -> None:
    c = client(app_server)
    sid = c.predict(api_name="/new_session")
    _, report = edit(c, sid, make(tmp_path / name), "add the text 'HI'")
    assert any(note in n for n in report["notes"]), report["notes"]
    assert c.predict(sid, api_name="/history")["versions"][0]["kind"] == "upload"


def test_mistakes_are_messages(app_server: AppServer, tmp_path: Path) -> None:
    c = client(app_server)
    sid = c.predict(api_name="/new_session")
    with pytest.raises(Exception, match="Nothing to undo"):
        c.predict(sid, api_name="/undo")
    with pytest.raises(Exception, match="Upload an image first"):
        edit(c, sid, None)
    edit(c, sid, sign(tmp_path / "sign.png"))
    with pytest.raises(Exception, match="Turn 987654 does not exist in this session"):
        c.predict(sid, 987654, "s1", 1.0, "", "ann", api_name="/score")
    with pytest.raises(Exception, match="The instruction is empty: say what to change"):
        edit(c, sid, None, "   ")
    with pytest.raises(Exception, match="outside the 480x200 image"):
        edit(c, sid, None, "remove the text", box="900,0,10,10")
    with pytest.raises(Exception, match="Unknown session"):
        c.predict("not-a-session", api_name="/history")


def test_the_page_is_served_without_secrets(app_server: AppServer) -> None:
    for path in ("", "config", "gradio_api/info"):
        with urllib.request.urlopen(app_server.url + path, timeout=10) as r:
            body = r.read().decode("utf-8", "replace")
            assert r.status == 200 and SECRET_KEY not in body, path
