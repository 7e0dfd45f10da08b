"""Weights resolver, `models verify` and `models pull` (a single-file checkpoint from a local FAKE HTTP server)."""

from __future__ import annotations

import http.server
import threading
from pathlib import Path

import pytest

from costa.config import Settings
from costa.errors import InputError
from costa.models.manage import pull_models, verify_models
from costa.models.weights import ModelSpec, WeightsMissingError, locate, resolve
from costa.tables import load_tables


def _settings(tmp_path: Path, **env: str) -> Settings:
    return Settings.from_env({"COSTA_HOME": str(tmp_path / "home"), "COSTA_MODELS_DIR": str(tmp_path / "m"), **env})


SPEC = {
    "ckpt.pth": ModelSpec("ckpt.pth", "file", "segment_anything", (("ckpt.pth",),), 0.001),
    "org/model": ModelSpec("org/model", "snapshot", "transformers", (("config.json",), ("model.safetensors",)), 1.0),
}


def _safetensors(path: Path, data_bytes: int, truncate: int = 0) -> None:
    import json
    import struct

    header = json.dumps({"w": {"dtype": "U8", "shape": [data_bytes], "data_offsets": [0, data_bytes]}}).encode()
    blob = struct.pack("<Q", len(header)) + header + b"\0" * data_bytes
    path.write_bytes(blob[: len(blob) - truncate])


def test_resolver_finds_snapshots_and_says_what_is_missing(tmp_path: Path) -> None:
    s = _settings(tmp_path)
    with pytest.raises(WeightsMissingError, match=r"m/org/model/ nor in the Hugging Face cache"):
        resolve("org/model", s, SPEC)
    snap = tmp_path / "m/org/model"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text("{}")
    with pytest.raises(WeightsMissingError, match=r"incomplete .* missing model.safetensors"):
        resolve("org/model", s, SPEC)
    _safetensors(snap / "model.safetensors", 64)
    assert resolve("org/model", s, SPEC) == snap and locate("org/model", s, SPEC).source == "models_dir"


def test_verify_catches_a_truncated_weights_file(tmp_path: Path) -> None:
    s = _settings(tmp_path)
    snap = tmp_path / "m/org/model"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text("{}")
    _safetensors(snap / "model.safetensors", 64, truncate=10)
    ok, lines = verify_models(["org/model"], load_tables(), s, SPEC)
    assert not ok and "truncated" in lines[0]


def test_pull_refuses_unless_allowed_then_downloads_a_file(tmp_path: Path) -> None:
    served = tmp_path / "served"
    served.mkdir()
    (served / "ckpt.pth").write_bytes(b"x" * 5000)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=str(served), **k)

        def log_message(self, *a):  # keep test output quiet
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)  # a FAKE download host
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/ckpt.pth"
        specs = {"ckpt.pth": ModelSpec("ckpt.pth", "file", "segment_anything", (("ckpt.pth",),), 0.005, url=url)}
        s = _settings(tmp_path)
        with pytest.raises(InputError, match="downloads are off"):
            pull_models(["ckpt.pth"], s, explicit=False, specs=specs)
        lines = pull_models(["ckpt.pth"], s, explicit=True, specs=specs)
        assert lines == [f"pulled ckpt.pth into {tmp_path / 'm/ckpt.pth'}"]
        assert (tmp_path / "m/ckpt.pth").read_bytes() == b"x" * 5000
        # with downloads allowed, resolving a missing file downloads it on first use
        (tmp_path / "m/ckpt.pth").unlink()
        assert resolve("ckpt.pth", _settings(tmp_path, COSTA_ALLOW_DOWNLOADS="1"), specs).is_file()
    finally:
        server.shutdown()


def test_models_table_names_every_ready_neural_tools_weights() -> None:
    from costa.models.manage import needed_models
    from costa.models.weights import load_model_specs

    specs = load_model_specs()
    for model_id in needed_models(load_tables()):
        assert model_id in specs, model_id
