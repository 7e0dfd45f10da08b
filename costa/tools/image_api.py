"""Masked image edits through the images API of the OpenAI-compatible endpoint (`sd_erase`, `sd_search_replace`,
`sd_search_recolor`: the paper's hosted Stable Diffusion role).

Each call sends `POST /v1/images/edits` (multipart: image, mask, prompt, size, model) with a crop around the target
instead of the whole photo: the target's window (with context margin, from `costa.tools.inpaint.edit_window`) grown
to the endpoint's aspect ratio and resized to its size (COSTA_IMAGE_EDIT_SIZE, default 1024x1024). The mask is an
RGBA PNG whose transparent pixels are the area to edit (the images API's convention). The reply is resized back to
the crop and pasted through the feathered mask (`inpaint.feather` / `inpaint.paste`), so every pixel farther than
the feather from the target is returned bit for bit unchanged.

Every request, failed or not, becomes an `LlmCall` event for the ledger (cost: COSTA_IMAGE_EDIT_PRICE per image
when set). An endpoint error, a refusal, a reply of the wrong size or one that is not an image is a `ToolError` the
search routes around. `openai` is imported on first use.
"""

from __future__ import annotations

import base64
import io
import re
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from costa.config import Settings
from costa.errors import ToolError
from costa.events import LlmCall
from costa.llm_client import MAX_BACKOFF_SECONDS, PLACEHOLDER_KEY, error_text
from costa.masks import dilate_mask, union_masks
from costa.models.control import check_stop, report
from costa.tools.base import Tool
from costa.tools.grounding_dino import noun_phrase
from costa.tools.inpaint import Window, edit_window, feather, paste
from costa.tools.params import int_param
from costa.types import EditState, Subtask, ToolOutput

_SIZE = re.compile(r"^\s*(\d{2,5})\s*x\s*(\d{2,5})\s*$")
#: Longest wait for a reply given as an http(s) URL to download, in seconds.
URL_TIMEOUT_SECONDS = 60.0


def parse_size(text: str) -> tuple[int, int]:
    """(width, height) in pixels from "WxH".

    >>> parse_size("1536x1024")
    (1536, 1024)
    """
    m = _SIZE.match(text or "")
    if not m:
        raise ToolError(f"COSTA_IMAGE_EDIT_SIZE must look like 1024x1024, got {text!r}")
    return int(m.group(1)), int(m.group(2))


def _grow(lo: int, hi: int, need: int, limit: int) -> tuple[int, int]:
    """The span [lo, hi) grown around its centre to `need` (at most `limit`), shifted to stay inside [0, limit)."""
    need = min(max(need, hi - lo), limit)
    start = max(0, min((lo + hi - need) // 2, limit - need))
    return start, start + need


def api_window(mask: np.ndarray, size: tuple[int, int], feather_px: int) -> Window:
    """The target's edit window (context margin as for local inpainting) grown to the aspect ratio of `size`.

    The window keeps the target with its context; where the image is too small to reach the aspect ratio the window
    is the image's full width or height and the resize to `size` stretches it slightly (undone on the way back).
    """
    tw, th = size
    win = edit_window(mask, max(tw, th), feather_px)
    h, w = mask.shape
    ww, wh = win.x2 - win.x1, win.y2 - win.y1
    x1, x2, y1, y2 = win.x1, win.x2, win.y1, win.y2
    if ww * th < wh * tw:  # too narrow for the endpoint's shape
        x1, x2 = _grow(x1, x2, round(wh * tw / th), w)
    else:
        y1, y2 = _grow(y1, y2, round(ww * th / tw), h)
    return Window(y1, y2, x1, x2, tw, th)


def _png(image: Any) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


def edit_request_files(crop: np.ndarray, crop_mask: np.ndarray, size: tuple[int, int]) -> tuple[bytes, bytes]:
    """(image PNG, mask PNG) at `size`: the crop in RGB, and an RGBA mask transparent where the edit goes."""
    from PIL import Image

    image = Image.fromarray(crop).resize(size, Image.Resampling.LANCZOS)
    alpha = Image.fromarray(np.where(crop_mask, 0, 255).astype(np.uint8)).resize(size, Image.Resampling.NEAREST)
    rgba = np.zeros((size[1], size[0], 4), np.uint8)
    rgba[..., 3] = np.asarray(alpha)
    return _png(image), _png(Image.fromarray(rgba, "RGBA"))


def decode_reply_image(response: Any, size: tuple[int, int]) -> np.ndarray:
    """The first image of an images API reply as RGB uint8 of exactly `size`.

    Raises:
        ToolError: no image in the reply, bytes that are not an image, or an image of another size.
    """
    from PIL import Image, UnidentifiedImageError

    data = list(getattr(response, "data", None) or [])
    if not data:
        raise ToolError("the images endpoint answered no image (a refusal or an empty reply)")
    item = data[0]
    b64 = getattr(item, "b64_json", None)
    url = getattr(item, "url", None)
    try:
        if b64:
            raw = base64.b64decode(b64, validate=False)
        elif url and str(url).startswith("data:"):
            raw = base64.b64decode(str(url).split(",", 1)[1])
        elif url and str(url).startswith(("http://", "https://")):
            import urllib.request

            with urllib.request.urlopen(str(url), timeout=URL_TIMEOUT_SECONDS) as r:
                raw = r.read()
        else:
            raise ToolError("the images endpoint's reply has neither b64_json nor a URL")
        pil = Image.open(io.BytesIO(raw))
        pil.load()
    except (ValueError, OSError, UnidentifiedImageError) as e:
        raise ToolError(f"the images endpoint's reply is not an image: {e}") from e
    if pil.size != size:
        raise ToolError(f"the images endpoint returned {pil.size[0]}x{pil.size[1]}, asked for {size[0]}x{size[1]}")
    return np.asarray(pil.convert("RGB"))


def _usage(response: Any) -> tuple[int, int]:
    usage = getattr(response, "usage", None)
    if usage is None:
        return 0, 0
    return int(getattr(usage, "input_tokens", 0) or 0), int(getattr(usage, "output_tokens", 0) or 0)


class ImageApiEditor(Tool):
    """Shared behaviour: mask → crop at the endpoint's size → `/v1/images/edits` → feathered paste.

    Params:
        feather_px: width of the blend beyond the target in image pixels; pixels farther are unchanged.

    `sleep` waits between retries (a test may replace it).
    """

    sleep: Callable[[float], None] = staticmethod(time.sleep)

    def __init__(self, spec: Any, **kwargs: Any) -> None:
        super().__init__(spec)
        self._client: Any = None

    # ------------------------------------------------------------------ readiness (no openai import)
    def missing(self) -> str | None:
        base = super().missing()
        if base:
            return base
        s = self.current_settings()
        problems = []
        if not s.openai_base_url and not s.openai_api_key:
            problems.append(
                "no endpoint configured: set OPENAI_BASE_URL (an OpenAI-compatible server with /v1/images/edits) "
                "or OPENAI_API_KEY"
            )
        if not s.image_edit_model:
            problems.append("image edit model not set: set COSTA_IMAGE_EDIT_MODEL (e.g. gpt-image-1 or dall-e-2)")
        if not _SIZE.match(s.image_edit_size):
            problems.append(f"COSTA_IMAGE_EDIT_SIZE must look like 1024x1024, got {s.image_edit_size!r}")
        return "; ".join(problems) or None

    def client(self) -> Any:
        if self._client is None:
            import openai

            s = self.current_settings()
            self._client = openai.OpenAI(
                base_url=s.openai_base_url,
                api_key=s.openai_api_key or PLACEHOLDER_KEY,
                timeout=s.llm_timeout_seconds,
                max_retries=0,
            )
        return self._client

    # ------------------------------------------------------------------ what to ask
    def prompt(self, subtask: Subtask) -> str:
        raise NotImplementedError

    # ------------------------------------------------------------------ the request
    def request(self, image_png: bytes, mask_png: bytes, prompt: str, size: tuple[int, int]) -> Any:
        """One edit, retried after a timeout, connection error, 429 or 5xx; every attempt reported as an `LlmCall`.

        Raises:
            ToolError: the endpoint refused the request (4xx, e.g. a content-policy refusal) or kept failing.
        """
        import openai

        s: Settings = self.current_settings()
        model = s.image_edit_model or ""
        attempt = 0
        while True:
            check_stop()
            t0 = time.perf_counter()
            try:
                response = self.client().images.edit(
                    model=model,
                    image=("image.png", image_png, "image/png"),
                    mask=("mask.png", mask_png, "image/png"),
                    prompt=prompt,
                    size=f"{size[0]}x{size[1]}",  # any "WxH" an endpoint offers
                    n=1,
                )
            except openai.APIStatusError as e:
                error = f"HTTP {e.status_code}: {error_text(e)}"
                report(LlmCall(self.spec.id, model, time.perf_counter() - t0, ok=False, error=error))
                if e.status_code != 429 and e.status_code < 500:
                    raise ToolError(f"the images endpoint refused the edit: {error}") from e
            except (openai.APITimeoutError, openai.APIConnectionError) as e:
                error = f"cannot reach the images endpoint: {e}"
                report(LlmCall(self.spec.id, model, time.perf_counter() - t0, ok=False, error=error))
            except openai.OpenAIError as e:
                report(LlmCall(self.spec.id, model, time.perf_counter() - t0, ok=False, error=str(e)))
                raise ToolError(f"the images endpoint answered something unusable: {e}") from e
            else:
                tin, tout = _usage(response)
                report(LlmCall(self.spec.id, model, time.perf_counter() - t0, tin, tout, s.image_edit_price))
                return response
            if attempt >= s.llm_retries:
                raise ToolError(f"the images endpoint failed {attempt + 1} time(s), the last: {error}")
            self.sleep(min(s.llm_backoff_seconds * 2**attempt, MAX_BACKOFF_SECONDS))
            attempt += 1

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        from PIL import Image

        masks = state.artifacts.get("masks")
        if not masks:
            raise ToolError("no mask of the target to edit")
        mask = union_masks(masks, state.height, state.width)
        if not mask.any():
            raise ToolError("the target's mask is empty")
        feather_px = int_param(params, "feather_px")
        size = parse_size(self.current_settings().image_edit_size)
        prompt = self.prompt(subtask)
        win = api_window(mask, size, feather_px)
        crop = state.image[win.y1 : win.y2, win.x1 : win.x2]
        crop_mask = dilate_mask(mask, max(2, feather_px // 2))[win.y1 : win.y2, win.x1 : win.x2]
        image_png, mask_png = edit_request_files(crop, crop_mask, size)
        response = self.request(image_png, mask_png, prompt, size)
        edited = decode_reply_image(response, size)
        back = np.asarray(Image.fromarray(edited).resize((crop.shape[1], crop.shape[0]), Image.Resampling.LANCZOS))
        alpha = feather(mask, feather_px)
        image = paste(state.image, back, alpha, win)
        notes = (
            f"edited a {win.x2 - win.x1}x{win.y2 - win.y1} window through the images API at {size[0]}x{size[1]} "
            f"({self.current_settings().image_edit_model}), prompt {prompt!r}"
        )
        return ToolOutput(image=image, edited_region=alpha > 0, notes=notes)


class ApiEraser(ImageApiEditor):
    """Remove what the mask covers and continue the surroundings (`sd_erase`)."""

    def prompt(self, subtask: Subtask) -> str:
        noun = noun_phrase(subtask.target) or "object"
        return (
            f"Remove the {noun} in the transparent area and fill it with a seamless continuation of the "
            "surrounding background; add no new object and no text."
        )


class ApiReplacer(ImageApiEditor):
    """Paint the subtask's new object where the mask is (`sd_search_replace`)."""

    def prompt(self, subtask: Subtask) -> str:
        if not subtask.result:
            raise ToolError("object replacement needs what to paint (the new object)")
        noun = noun_phrase(subtask.target) or "object"
        new = noun_phrase(subtask.result) or subtask.result
        return f"Replace the {noun} in the transparent area with a {new}, photorealistic, matching light and scale."


class ApiRecolourer(ImageApiEditor):
    """Give the masked object the subtask's new colour, same shape and texture (`sd_search_recolor`)."""

    def prompt(self, subtask: Subtask) -> str:
        if not subtask.result:
            raise ToolError("recolouring needs the new colour")
        noun = noun_phrase(subtask.target) or "object"
        return f"Make the {noun} in the transparent area {subtask.result}; keep its shape, texture and lighting."
