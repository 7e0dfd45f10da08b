"""Issue 21's ten defects, each reproduced through the real interface (`python app.py` by `gradio_client` and HTTP, its
start-up as a subprocess) by the probe `bench faults` runs for it (`bench/faults_defects.py`); each test failed
before its fix (README: the before / after table)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pytest

from bench.faults import LiveApp
from bench.faults_defects import (
    probe_emptied_database,
    probe_exports,
    probe_growth,
    probe_huge_ids,
    probe_image_modes,
    probe_integrity,
    probe_owner_files,
    probe_storage_faults,
    probe_surrogates,
    probe_undo_vs_edit,
)
from costa.budget import TurnBudget, check_turn_pixels
from costa.errors import QuotaError
from costa.images import load_image, sample_note, to_uint8
from costa.ratelimit import RateLimit
from costa.testing.tinyfs import can_mount
from tests.app_server import AppServer

ROOT = Path(__file__).resolve().parents[1]


def live(server: AppServer) -> LiveApp:
    """The shared test app as a probe target."""
    return LiveApp(server.home, ROOT, port=urlsplit(server.url).port or 0)


@pytest.fixture
def own_app(tmp_path: Path) -> Iterator[LiveApp]:
    """An app of the test's own (the probes restart it)."""
    app = LiveApp(tmp_path / "home", ROOT, {"COSTA_RATE_LIMIT": "0"}).start()
    try:
        yield app
    finally:
        app.stop()


# ------------------------------------------------------------------------------------------- through the app


@pytest.mark.slow
def test_defect_1_an_emptied_or_missing_database_refuses_to_start_and_deletes_no_image(
    own_app: LiveApp, tmp_path: Path
) -> None:
    probe = probe_emptied_database(own_app, tmp_path)
    assert probe.held, probe.detail


@pytest.mark.slow
def test_defect_2_growth_is_bounded_uploads_pixels_and_rate(own_app: LiveApp, tmp_path: Path) -> None:
    """'hello there' with an upload stores nothing; a flat 6300² PNG is refused naming the pixel budget; one client
    past COSTA_RATE_LIMIT is refused in a sentence while another address is served."""
    limited = LiveApp(tmp_path / "limited", ROOT, {"COSTA_RATE_LIMIT": "20"}).start()
    try:
        probe = probe_growth(own_app, tmp_path, limited)
    finally:
        limited.stop()
    assert probe.held, probe.detail


@pytest.mark.slow
def test_defect_3_a_lone_surrogate_anywhere_is_refused_whole(app_server: AppServer, tmp_path: Path) -> None:
    probe = probe_surrogates(live(app_server), tmp_path)
    assert probe.held, probe.detail


@pytest.mark.slow
@pytest.mark.skipif(not can_mount(), reason="mounting a tmpfs needs root")
def test_defect_4_a_full_then_read_only_home_is_one_sentence_and_reads_keep_working(tmp_path: Path) -> None:
    probe = probe_storage_faults(ROOT, tmp_path)
    assert probe.held, probe.detail


@pytest.mark.slow
def test_defect_5_a_lost_file_and_a_damaged_page_are_named_in_one_sentence(own_app: LiveApp, tmp_path: Path) -> None:
    probe = probe_integrity(own_app, tmp_path)
    assert probe.held, probe.detail


@pytest.mark.slow
def test_defect_6_undo_and_redo_never_block_an_edit(app_server: AppServer, tmp_path: Path) -> None:
    probe = probe_undo_vs_edit(live(app_server), tmp_path)
    assert probe.held, probe.detail


@pytest.mark.slow
def test_defect_7_huge_ids_to_branch_and_score_are_a_clear_refusal(app_server: AppServer, tmp_path: Path) -> None:
    probe = probe_huge_ids(live(app_server), tmp_path)
    assert probe.held, probe.detail


@pytest.mark.slow
def test_defect_8_exports_escape_controls_quote_reruns_and_prefix_formulas(
    app_server: AppServer, tmp_path: Path
) -> None:
    probe = probe_exports(live(app_server), tmp_path)
    assert probe.held, probe.detail


@pytest.mark.slow
def test_defect_9_float_16_bit_and_cmyk_tiffs_convert_with_a_note(app_server: AppServer, tmp_path: Path) -> None:
    probe = probe_image_modes(live(app_server), tmp_path)
    assert probe.held, probe.detail


@pytest.mark.slow
def test_defect_10_with_login_every_result_file_is_its_owners_only(tmp_path: Path) -> None:
    app = LiveApp(tmp_path / "home", ROOT, {"COSTA_AUTH": "alice:pw-a,bob:pw-b", "COSTA_RATE_LIMIT": "0"}).start()
    try:
        probe = probe_owner_files(app, tmp_path)
    finally:
        app.stop()
    assert probe.held, probe.detail


# ----------------------------------------------------------------------------------------------- the pieces


def test_the_rate_limit_holds_each_client_to_its_own_bucket() -> None:
    now = [0.0]
    limit = RateLimit(per_minute=60, clock=lambda: now[0])
    assert [limit.wait("a") for _ in range(15)] == [0.0] * 15  # a burst of a quarter of a minute
    assert limit.wait("a") == pytest.approx(1.0)
    assert limit.wait("b") == 0.0
    now[0] = 1.0
    assert limit.wait("a") == 0.0
    assert RateLimit(per_minute=0).wait("a") == 0.0  # 0: no limit


def test_the_pixel_budget_refusal_names_the_budget_and_the_setting() -> None:
    budget = TurnBudget(16_000_000, "8 per CPU core on 2, no GPU; COSTA_TURN_MEGAPIXELS sets it")
    check_turn_pixels(budget, 4000, 4000)
    with pytest.raises(QuotaError, match=r"39\.7 megapixels.*at most 16\.0 megapixels.*COSTA_TURN_MEGAPIXELS"):
        check_turn_pixels(budget, 6300, 6300)


@pytest.mark.parametrize("bad", [1e300, 2**63, -1, 0, 1.5, True, "abc", "1e3", float("nan"), None, "\u0661"])
def test_an_id_out_of_range_or_not_whole_is_refused_naming_it(bad: object) -> None:
    """Defect 7 below the API (the probe sends them to /branch and /score): ids are whole numbers in [1, 2**53-1]."""
    from costa.errors import InputError
    from costa.store.validate import MAX_ID, parse_id

    with pytest.raises(InputError, match=r"version id must be a whole number from 1 to \d+, got"):
        parse_id(bad, "version id")
    assert parse_id(7.0, "id") == parse_id("7", "id") == 7 and parse_id(MAX_ID, "id") == MAX_ID


def test_text_with_a_lone_surrogate_or_nul_is_refused_whole() -> None:
    """Defect 3 below the API: the store keeps only valid Unicode (the probe sends it by plain HTTP)."""
    from costa.errors import InputError
    from costa.store.validate import check_text

    for bad, why in (("fine \ud83d", "lone surrogate at character 6"), ("a\x00b", "NUL character")):
        with pytest.raises(InputError, match=why):
            check_text(bad, "comment")
    assert check_text("fine 🙂", "comment") == "fine 🙂"


def test_the_pixel_budget_scales_with_the_machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """8 MP per CPU core (at least 8), COSTA_MAX_PIXELS with a GPU, which is asked for only past the CPU budget."""
    from costa import budget as B
    from costa.config import Settings

    asked: list[str | None] = []
    monkeypatch.setattr(B, "_has_gpu", lambda prefer: asked.append(prefer) or gpu[0])
    settings, gpu = Settings(home=tmp_path, max_pixels=40_000_000), [False]
    for cores, mp in ((1, 8), (2, 16), (6, 48)):
        monkeypatch.setattr(B, "cpu_cores", lambda cores=cores: cores)
        b = B.turn_budget(settings, 1000)
        assert b.pixels == mp * 1_000_000 and f"per CPU core on {cores}, no GPU" in b.why
    assert asked == []  # small images never look for a GPU
    monkeypatch.setattr(B, "cpu_cores", lambda: 2)
    assert B.turn_budget(settings, 20_000_000).pixels == 16_000_000  # no GPU: the CPU's
    gpu[0] = True
    assert B.turn_budget(settings, 20_000_000) == B.TurnBudget(40_000_000, "a GPU: COSTA_MAX_PIXELS")
    assert len(asked) == 2


def test_a_float_tiff_in_0_1_is_scaled_not_black(tmp_path: Path) -> None:
    tifffile = pytest.importorskip("tifffile")
    ramp = np.linspace(0.0, 1.0, 256, dtype=np.float32)[None, :].repeat(8, 0)
    for name, arr in (("grey.tif", ramp), ("rgb.tif", np.dstack([ramp] * 3))):
        path = tmp_path / name
        tifffile.imwrite(path, arr)
        rgb = load_image(path.read_bytes())
        assert rgb.shape == (8, 256, 3) and abs(float(rgb.mean()) - 127.5) < 1, name
        assert "floating-point" in (sample_note(path.read_bytes()) or ""), name
    assert to_uint8(np.array([np.nan, 2.0, 4.0])).tolist() == [0, 128, 255]  # above 1: scaled by the largest value


def test_the_page_upload_of_an_image_over_the_turn_budget_is_refused_and_not_stored(tmp_path: Path) -> None:
    """An upload no turn could edit is refused when it is read (the page reads a photo when it is chosen, and holds it
    until a turn keeps it), naming the budget; `upload`, which stores at once, refuses it too."""
    from PIL import Image

    from costa.config import Settings
    from costa.services import Services
    from costa.session import SessionCore
    from costa.store import Store

    core = SessionCore(Services(Settings(home=tmp_path / "home", turn_megapixels=0.01)), Store(tmp_path / "store"))
    try:
        sid = core.new_session(None).id
        big, small = tmp_path / "big.png", tmp_path / "small.png"
        Image.new("RGB", (200, 100), (90, 90, 90)).save(big)  # 0.02 MP
        Image.new("RGB", (80, 50), (90, 90, 90)).save(small)
        for read in (core.read_upload, lambda path: core.upload(sid, None, path)):
            with pytest.raises(QuotaError, match=r"0\.02 megapixels; a turn here edits at most 0\.01 megapixels"):
                read(big)
        assert core.store.versions(sid) == []
        core.upload(sid, None, small)
        assert len(core.store.versions(sid)) == 1
    finally:
        core.close()


@pytest.mark.skipif(not can_mount(), reason="mounting a tmpfs needs root")
@pytest.mark.parametrize("free", [0.3, 1.5, 5.0])  # × one version's size: in the image, in the bundle, in Gradio's copy
def test_an_export_the_disk_fills_during_is_one_sentence_and_leaves_no_partial_file(
    tmp_path: Path, free: float
) -> None:
    """The disk fills in the middle of an export (the image's copy, the bundle, or the copy Gradio makes of both to
    serve them): one sentence, no half-written file left in the session's temporary folder, the export already on
    screen still whole, and the next export works once there is room again."""
    import zipfile

    from PIL import Image

    from costa.config import Settings
    from costa.errors import StorageError
    from costa.services import Services
    from costa.session import SessionCore
    from costa.testing.tinyfs import fill, tiny_disk

    rng = np.random.default_rng(0)
    with tiny_disk(tmp_path / "disk", 16) as disk:
        core = SessionCore(Services(Settings(home=disk / "home")))
        try:
            sid = core.new_session(None).id

            def add(i: int) -> int:  # noise: about 0.75 MB per version, stored as it came
                path = tmp_path / f"noise{i}.png"
                Image.fromarray(rng.integers(0, 256, (500, 500, 3), dtype=np.uint8)).save(path)
                return Path(core.upload(sid, None, path)[0].file).stat().st_size

            add(0), add(1)
            shown = core.versions.export(sid, None)  # the links already on the page
            whole = {p: p.read_bytes() for p in shown if p is not None}
            folder = next(iter(whole)).parent
            size = add(2)  # the next export is one version larger
            filler = fill(disk)
            os.truncate(filler, filler.stat().st_size - int(free * size))
            with pytest.raises(StorageError, match="the disk holding COSTA_HOME is full: nothing was saved"):
                core.versions.export(sid, None)
            assert sorted(folder.iterdir()) == sorted(whole), "a half-written export was left behind"
            assert all(p.read_bytes() == data for p, data in whole.items()), "the export on screen was damaged"
            filler.unlink()
            _, bundle = core.versions.export(sid, None)
            with zipfile.ZipFile(bundle) as z:
                assert z.testzip() is None and len([n for n in z.namelist() if n.startswith("images/")]) == 3
        finally:
            core.close()
