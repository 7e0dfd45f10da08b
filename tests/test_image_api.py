"""Masked image edits through the images API (`sd_erase`, `sd_search_replace`, `sd_search_recolor`) against the
FAKE OpenAI-compatible server (tests/fake_openai.py): real HTTP, multipart requests, scripted FAKE PNG replies."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from costa.errors import ToolError
from costa.masks import dilate_mask
from costa.testing.calibration import fake_table
from costa.types import EditState, Mask, Subtask
from tests.fake_openai import FakeOpenAI, error, image_edit

ROOT = Path(__file__).resolve().parents[1]
SIZE = (512, 512)
GREY = (150, 150, 150)
FEATHER_PX = 8  # the rows' default
TARGET = (slice(200, 260), slice(300, 380))  # rows, columns of the red box


def scene() -> tuple[np.ndarray, np.ndarray]:
    """Noise everywhere (so any changed pixel shows), a flat grey patch around a red box; the box's mask."""
    img = np.random.default_rng(0).integers(60, 200, (480, 640, 3), dtype=np.uint8)
    img[130:330, 220:460] = GREY
    img[TARGET] = (220, 30, 30)
    mask = np.zeros((480, 640), bool)
    mask[TARGET] = True
    return img, mask


def png(array: np.ndarray | None = None, size: tuple[int, int] = SIZE, colour: tuple[int, int, int] = GREY) -> bytes:
    """A FAKE edit result: a flat PNG (or `array`) — what a good eraser would return on the grey patch."""
    buf = io.BytesIO()
    (Image.fromarray(array) if array is not None else Image.new("RGB", size, colour)).save(buf, format="PNG")
    return buf.getvalue()


def _env(fake: FakeOpenAI, home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "COSTA_"))}
    return {
        **env,
        "COSTA_CALIBRATION_TABLE": str(fake_table()),  # the suite's FAKE table (conftest): synthetic scenes
        "OPENAI_BASE_URL": fake.base_url,
        "COSTA_IMAGE_EDIT_MODEL": "fake-image-model",
        "COSTA_IMAGE_EDIT_SIZE": f"{SIZE[0]}x{SIZE[1]}",
        "COSTA_LLM_RETRIES": "0",
        "COSTA_HOME": str(home),
        "COSTA_REFLECT": "0",
        **extra,
    }


def _edit(tmp_path: Path, fake: FakeOpenAI) -> tuple[subprocess.CompletedProcess[str], np.ndarray, list[dict]]:
    img, mask = scene()
    Image.fromarray(img).save(tmp_path / "in.png")
    Image.fromarray(mask.astype(np.uint8) * 255).save(tmp_path / "mask.png")
    cmd = [sys.executable, "-m", "costa", "edit", str(tmp_path / "in.png"), "remove the red box"]
    cmd += ["--mask", str(tmp_path / "mask.png"), "--alpha", "0", "-o", str(tmp_path / "out.png")]
    cmd += ["--events", str(tmp_path / "events.jsonl")]
    r = subprocess.run(cmd, env=_env(fake, tmp_path / "home"), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    out = np.asarray(Image.open(tmp_path / "out.png").convert("RGB"))
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    return r, out, events


def test_removal_end_to_end_through_costa_edit(tmp_path: Path) -> None:
    from costa.tools.image_api import api_window

    img, mask = scene()
    with FakeOpenAI(images=[image_edit(png())] * 4) as fake:
        r, out, events = _edit(tmp_path, fake)
        edits = fake.image_edit_requests
    chosen = next(line for line in r.stdout.splitlines() if line.startswith("chosen path:"))
    assert chosen.endswith("sd_erase (s1)"), r.stdout[-2000:]  # after the user's mask, or GrabCut's refinement of it
    # pixels outside the feather are bit-for-bit the input; the box is gone (grey like the reply)
    outside = ~dilate_mask(mask, FEATHER_PX)
    assert np.array_equal(out[outside], img[outside])
    assert np.abs(out[TARGET].astype(int) - GREY).max() <= 2
    # the endpoint got the crop and the mask as PNG files, the model and size from the environment
    first = edits[0]
    assert set(first["files"]) == {"image", "mask"}
    assert first["fields"]["model"] == "fake-image-model" and first["fields"]["size"] == "512x512"
    assert "Remove the red box" in first["fields"]["prompt"]
    sent = np.asarray(Image.open(io.BytesIO(first["files"]["image"]["data"])).convert("RGB"))
    sent_mask = np.asarray(Image.open(io.BytesIO(first["files"]["mask"]["data"])))
    assert sent.shape == (512, 512, 3) and sent_mask.shape == (512, 512, 4)
    # the mask's transparent pixels are the target (grown by a few px) inside the crop, at the endpoint's size
    win = api_window(mask, SIZE, FEATHER_PX)
    crop_h, crop_w = win.y2 - win.y1, win.x2 - win.x1
    assert win.y1 <= 200 and win.y2 >= 260 and win.x1 <= 300 and win.x2 >= 380 and crop_w == crop_h
    back = np.asarray(Image.fromarray(sent_mask[..., 3]).resize((crop_w, crop_h), Image.Resampling.NEAREST)) == 0
    target_in_crop = mask[win.y1 : win.y2, win.x1 : win.x2]
    assert back[target_in_crop].mean() == 1.0  # every target pixel is to be edited
    grown = dilate_mask(mask, 8)[win.y1 : win.y2, win.x1 : win.x2]
    assert not back[~grown].any()  # nothing farther than a few px from the target is
    # the crop sent is the image's window, resized
    expected = np.asarray(Image.fromarray(img[win.y1 : win.y2, win.x1 : win.x2]).resize(SIZE, Image.Resampling.LANCZOS))
    assert np.array_equal(sent, expected)
    # the call reached the event stream as an LlmCall (tokens from the reply's usage)
    calls = [e for e in events if e["kind"] == "llm_call" and e["purpose"] == "sd_erase"]
    assert calls and calls[0]["ok"] and (calls[0]["prompt_tokens"], calls[0]["completion_tokens"]) == (300, 4000)


def test_a_refused_edit_is_routed_around(tmp_path: Path) -> None:
    refusal = error(400, "Your request was rejected as a result of our safety system.")
    with FakeOpenAI(images=[refusal] * 4) as fake:
        r, out, events = _edit(tmp_path, fake)
        assert fake.image_edit_requests  # it was tried
    assert "chosen path:" in r.stdout and "chosen path: sd_erase" not in r.stdout
    assert "refused the edit: HTTP 400" in r.stdout
    img, mask = scene()
    assert np.array_equal(out[~dilate_mask(mask, 16)], img[~dilate_mask(mask, 16)])
    failed = [e for e in events if e["kind"] == "llm_call" and e["purpose"] == "sd_erase"]
    assert failed and not failed[0]["ok"] and "safety system" in failed[0]["error"]


def _services(monkeypatch: pytest.MonkeyPatch, fake: FakeOpenAI, **extra: str):
    from costa.services import Services

    for k in list(os.environ):
        if k.startswith(("OPENAI_", "COSTA_IMAGE_EDIT")):
            monkeypatch.delenv(k)
    for k, v in {
        "OPENAI_BASE_URL": fake.base_url,
        "COSTA_IMAGE_EDIT_MODEL": "fake-image-model",
        "COSTA_IMAGE_EDIT_SIZE": "512x512",
        "COSTA_LLM_RETRIES": "0",
        **extra,
    }.items():
        monkeypatch.setenv(k, v)
    return Services()


def _state() -> EditState:
    img, mask = scene()
    return EditState(img, {"masks": (Mask(mask, "red box", 1.0),)})


def test_endpoint_errors_and_bad_replies_are_tool_errors_with_their_calls_recorded(monkeypatch) -> None:
    from costa.models.control import TurnControl, using_control

    script = [
        error(400, "content policy violation"),
        error(503, "overloaded"),
        image_edit(png(size=(256, 256))),
        image_edit(b"this is not a PNG"),
        image_edit(png(), as_url=True),
    ]
    control = TurnControl()
    with FakeOpenAI(images=script) as fake:
        tool = _services(monkeypatch, fake, COSTA_IMAGE_EDIT_PRICE="0.04").tool("sd_erase")
        sub = Subtask(id="s1", kind="object_removal", target="the red box")
        with using_control(control, "s1", "sd_erase", 0):
            with pytest.raises(ToolError, match="refused the edit: HTTP 400: content policy violation"):
                tool(_state(), sub, {})
            with pytest.raises(ToolError, match="failed 1 time"):
                tool(_state(), sub, {})
            with pytest.raises(ToolError, match="returned 256x256, asked for 512x512"):
                tool(_state(), sub, {})
            with pytest.raises(ToolError, match="not an image"):
                tool(_state(), sub, {})
            ok = tool(_state(), sub, {})  # a data: URL reply is read too
            with pytest.raises(ToolError, match="fake script exhausted"):
                tool(_state(), sub, {})
    assert ok.image is not None and ok.edited_region is not None and ok.edited_region[TARGET].all()
    calls = [e for e in control.events if e.kind == "llm_call"]
    assert [c.ok for c in calls] == [False, False, True, True, True, False]
    assert [c.cost for c in calls if c.ok] == [0.04, 0.04, 0.04]
    assert all(c.purpose == "sd_erase" and c.model == "fake-image-model" for c in calls)


def test_replace_and_recolour_send_the_new_object_and_colour(monkeypatch) -> None:
    with FakeOpenAI(images=[image_edit(png()), image_edit(png())]) as fake:
        services = _services(monkeypatch, fake)
        services.tool("sd_search_replace")(
            _state(), Subtask(id="s1", kind="object_replacement", target="the red box", result="a teapot"), {}
        )
        services.tool("sd_search_recolor")(
            _state(), Subtask(id="s1", kind="object_recoloration", target="the red box", result="blue"), {}
        )
        prompts = [r["fields"]["prompt"] for r in fake.image_edit_requests]
        with pytest.raises(ToolError, match="needs what to paint"):
            services.tool("sd_search_replace")(_state(), Subtask(id="s1", kind="object_replacement"), {})
    assert "with a teapot" in prompts[0] and "red box" in prompts[0]
    assert "blue" in prompts[1]


def test_wide_endpoint_size_and_small_images(monkeypatch) -> None:
    from costa.tools.image_api import api_window, parse_size

    _, mask = scene()
    win = api_window(mask, (1536, 1024), FEATHER_PX)
    assert (win.x2 - win.x1) * 1024 == pytest.approx((win.y2 - win.y1) * 1536, abs=1536)
    assert (win.model_w, win.model_h) == (1536, 1024)
    small = np.zeros((60, 300), bool)
    small[20:40, 100:140] = True
    tall = api_window(small, (512, 512), 4)  # the image is only 60 px high: the window takes all of it
    assert (tall.y1, tall.y2) == (0, 60) and 0 <= tall.x1 < tall.x2 <= 300
    with pytest.raises(ToolError, match="COSTA_IMAGE_EDIT_SIZE"):
        parse_size("big")


def test_doctor_lines(tmp_path: Path) -> None:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "COSTA_"))}
    base["COSTA_CALIBRATION_TABLE"] = str(fake_table())
    base["COSTA_HOME"] = str(tmp_path)

    def doctor(**env: str) -> str:
        r = subprocess.run(
            [sys.executable, "-m", "costa", "doctor"], env={**base, **env}, cwd=ROOT, capture_output=True, text=True,
            timeout=300,
        )  # fmt: skip
        return next(line for line in r.stdout.splitlines() if " sd_erase " in line)

    bare = doctor()
    assert bare.split()[0] == "missing" and "no endpoint configured" in bare and "COSTA_IMAGE_EDIT_MODEL" in bare
    line = doctor(OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    assert line.split()[0] == "missing" and "image edit model not set" in line and "no endpoint" not in line
    assert doctor(OPENAI_BASE_URL="http://127.0.0.1:9/v1", COSTA_IMAGE_EDIT_MODEL="m").split()[0] == "ready"


def test_a_busy_endpoint_is_retried_with_backoff(monkeypatch) -> None:
    from costa.models.control import TurnControl, using_control

    control = TurnControl()
    waits: list[float] = []
    with FakeOpenAI(images=[error(429, "slow down"), image_edit(png())]) as fake:
        tool = _services(monkeypatch, fake, COSTA_LLM_RETRIES="1", COSTA_LLM_BACKOFF="0.5").tool("sd_erase")
        tool.sleep = waits.append  # type: ignore[method-assign]
        with using_control(control, "s1", "sd_erase", 0):
            out = tool(_state(), Subtask(id="s1", kind="object_removal", target="red box"), {})
        assert len(fake.image_edit_requests) == 2
    assert out.image is not None and waits == [0.5]
    assert [(c.ok, c.error[:8]) for c in control.events if c.kind == "llm_call"] == [(False, "HTTP 429"), (True, "")]
