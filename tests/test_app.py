"""The app through its real interface: `python app.py` in a subprocess, driven with gradio_client."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.text_helpers import Line, background, draw

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = _free_port()
    home = tmp_path_factory.mktemp("home")
    env = {**os.environ, "COSTA_HOME": str(home), "COSTA_PORT": str(port), "GRADIO_ANALYTICS_ENABLED": "False"}
    env.pop("OPENAI_BASE_URL", None)
    proc = subprocess.Popen(
        [sys.executable, "app.py"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    url = f"http://127.0.0.1:{port}/"
    deadline = time.time() + 90
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("app exited early:\n" + (proc.stdout.read() if proc.stdout else ""))
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            time.sleep(0.3)
    else:
        proc.kill()
        raise RuntimeError("app did not answer within 90 s")
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture
def sign_file(tmp_path: Path) -> Path:
    p = tmp_path / "sign.png"
    Image.fromarray(draw(background("flat", 480, 200), [Line("SALE", (60, 50), 64, (190, 20, 20))])).save(p)
    return p


@pytest.mark.slow
def test_edit_endpoint_replaces_text(app_url: str, sign_file: Path) -> None:
    from gradio_client import Client, handle_file

    from costa.tools.ocr import RapidOcrReader

    client = Client(app_url, verbose=False)
    result, log = client.predict(
        handle_file(str(sign_file)), "replace the text 'SALE' with 'OPEN'", 1.0, "", api_name="/edit"
    )
    assert "chosen path: rapidocr_detect → text_replace_" in log
    assert "done s1 text_replacement" in log
    out = np.asarray(Image.open(result).convert("RGB"))
    text = " ".join(r.text for r in RapidOcrReader().read(out)).upper()
    assert "OPEN" in text and "SALE" not in text


@pytest.mark.slow
def test_bad_input_is_a_message_not_a_traceback(app_url: str, sign_file: Path) -> None:
    from gradio_client import Client, handle_file

    client = Client(app_url, verbose=False)
    with pytest.raises(Exception) as e:
        client.predict(handle_file(str(sign_file)), "   ", 1.0, "", api_name="/edit")
    assert "Type what to change" in str(e.value)
    with pytest.raises(Exception) as e:
        client.predict(handle_file(str(sign_file)), "remove the text", 1.0, "900,0,10,10", api_name="/edit")
    assert "outside the 480x200 image" in str(e.value)
