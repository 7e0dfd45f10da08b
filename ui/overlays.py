"""Pictures the page shows besides the edit itself: click markers and brush masks over the image, version
thumbnails, the status line.

Pure functions of their inputs (the status line reads the machine once per call, never at import).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
from PIL import Image, ImageDraw

from costa.bundle import export_name
from costa.errors import InputError
from costa.pointing import region_from_pointing
from costa.turn.records import UserRegion

#: Longest side of a gallery thumbnail, in pixels.
THUMB_SIDE = 256
_MARK = (255, 0, 140)


def annotate(image: np.ndarray, region: UserRegion | None) -> np.ndarray:
    """The image with what the user pointed at drawn on it: tinted click region, box outline, click dots."""
    if region is None or not (region.boxes or region.masks or region.points):
        return image
    out = image.astype(np.float32)
    for m in region.masks:
        out[m.data] = out[m.data] * 0.55 + np.asarray(_MARK, np.float32) * 0.45
    pil = Image.fromarray(np.clip(out, 0, 255).astype(np.uint8))
    d = ImageDraw.Draw(pil)
    width = max(2, min(image.shape[:2]) // 150)
    for b in region.boxes:
        d.rectangle((b.x, b.y, b.x2 - 1, b.y2 - 1), outline=_MARK, width=width)
    r = max(4, min(image.shape[:2]) // 80)
    for p in region.points:
        d.ellipse((p.x - r, p.y - r, p.x + r, p.y + r), fill=_MARK, outline=(255, 255, 255), width=max(1, r // 3))
    return np.asarray(pil, dtype=np.uint8)


def thumbnail(path: str | Path, side: int = THUMB_SIDE) -> np.ndarray:
    with Image.open(path) as opened:
        img = opened.convert("RGB")
        img.thumbnail((side, side))
        return np.asarray(img, dtype=np.uint8)


def gpu_present() -> bool:
    """Whether an NVIDIA GPU is visible, without importing torch (which `import costa` must not do)."""
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) in ("", "-1"):
        return False
    return Path("/proc/driver/nvidia/gpus").is_dir() or shutil.which("nvidia-smi") is not None


def llm_line(base_url: str | None, model: str | None, configured: bool) -> str:
    """ "LLM: offline rule planner" or "LLM: model at host" — never a key, a password or a query string."""
    if not configured:
        return "LLM: offline rule planner"
    where = "api.openai.com"
    if base_url:
        u = urlsplit(base_url)
        where = (u.hostname or base_url) + (f":{u.port}" if u.port else "")
    return f"LLM: {model or 'server default model'} at {where}"


def status_line(device_gpu: bool, llm: str, ready: int, total: int, session_id: str, owner: str | None) -> str:
    device = "GPU" if device_gpu else "CPU"
    who = f" · signed in as **{owner}**" if owner else ""
    return (
        f"🖥️ Running on **{device}** · 🧭 **{llm}** · 🔧 {ready} of {total} tools ready here · "
        f"session `{export_name(session_id)}`{who}"  # the name its exported files carry
    )


def points_text(clicks: Sequence[tuple[int, int]], note: str = "", brush_px: int = 0) -> str:
    """The pointing status line: what is marked as the target (clicks, a brush mask) or why it was refused."""
    if note:
        return f"📍 {note}"
    brush = f"🖌 Brush mask set: {brush_px:,} px (tinted) is the target. " if brush_px else ""
    if not clicks:
        if brush:
            return brush.rstrip()
        return (
            "📍 No target marked. Click the image to point at what to edit (1 click: a region, 2+: a box), "
            "or paint it with the brush below."
        )
    if len(clicks) == 1:
        return f"{brush}📍 1 click at {clicks[0][0]},{clicks[0][1]}: the tinted region is the target."
    return f"{brush}📍 {len(clicks)} clicks: the box around them is the target."


def pointed_region(state: Any, img: np.ndarray | None, box_text: str) -> tuple[UserRegion | None, str]:
    """The region pointed at on `img` (None when nothing is marked) and why it was refused ("" when it was not)."""
    if img is None or not (state.clicks or (box_text or "").strip() or state.brush is not None):
        return None, ""
    try:
        return region_from_pointing(img, state.clicks, box_text or "", state.brush), ""
    except InputError as e:
        return None, str(e)


def editor_value(img: np.ndarray | None) -> dict[str, Any] | None:
    return {"background": img, "layers": [], "composite": img} if img is not None else None
