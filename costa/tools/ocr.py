"""Text detection and reading with RapidOCR (PP-OCR models on onnxruntime; the weights ship inside the wheel).

`RapidOcrReader` wraps one engine, loaded once on first use and shared: the detector and extractor tools use it, and
the text checks receive the same instance through `CheckContext.reader`, so the models are in memory once per process.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from costa.errors import InputError, ToolError
from costa.textmatch import clean_target, find_matches, join_lines, semantic_kind
from costa.tools.base import Tool
from costa.tools.params import float_param
from costa.types import Box, EditState, Subtask, TextRegion, ToolOutput, ToolSpec

log = logging.getLogger(__name__)


class RapidOcrReader:
    """Read text lines from RGB images with RapidOCR.

    Args:
        box_thresh: least detector confidence in [0, 1] for a text box (lower finds fainter text, and more noise).
        upscale: factor (≥ 1) to enlarge the image by before detection, for small text.
        max_side: the longest side, in pixels, the detector works at before `upscale` (larger is slower and finds
            smaller text; 960 reads ~10 px text in about 0.1–0.3 s on two CPU cores).
        text_score: least recognition confidence in [0, 1] for a line to be returned.

    The engine is built on the first `read`; reads are serialised by a lock because RapidOCR keeps per-call settings
    (box_thresh) on the engine. The image is resized here rather than by RapidOCR (whose default enlarges every image
    to 736 px on its short side and is 5× slower on small images).
    """

    def __init__(
        self, box_thresh: float = 0.5, upscale: float = 1.0, max_side: int = 960, text_score: float = 0.5
    ) -> None:
        _check_params(box_thresh, upscale)
        if max_side < 32:
            raise InputError(f"max_side must be at least 32 pixels, got {max_side}")
        self.box_thresh = box_thresh
        self.upscale = upscale
        self.max_side = max_side
        self.text_score = text_score
        self._engine: Any = None
        self._lock = threading.Lock()

    def load(self) -> None:
        """Build the engine (about 1.5 s); later calls do nothing."""
        with self._lock:
            self._load_locked()

    def _load_locked(self) -> None:
        if self._engine is not None:
            return
        from rapidocr import RapidOCR

        logging.getLogger("RapidOCR").setLevel(logging.ERROR)
        self._engine = RapidOCR(
            params={
                "Global.log_level": "error",
                "Global.use_cls": False,  # edits keep text upright; the angle classifier only costs time
                "Global.text_score": self.text_score,
                "Global.max_side_len": 4096,
                "Det.limit_type": "max",
                "Det.limit_side_len": 4096,  # resizing is done in `read`
            }
        )
        log.info("RapidOCR engine loaded")

    def read(
        self, image: object, box_thresh: float | None = None, upscale: float | None = None
    ) -> tuple[TextRegion, ...]:
        """Return the text lines in `image`, in the detector's (reading) order.

        Args:
            image: RGB uint8 (H, W, 3) array.
            box_thresh: overrides the reader's detector threshold for this call.
            upscale: overrides the reader's enlargement factor for this call.

        Returns:
            Text regions with boxes and polygons in the input image's pixel coordinates; empty when none is found.
        """
        arr = _as_rgb(image)
        thresh = self.box_thresh if box_thresh is None else box_thresh
        factor = self.upscale if upscale is None else upscale
        _check_params(thresh, factor)
        height, width = arr.shape[:2]
        limit = self.max_side * factor
        scale = min(factor, limit / max(height, width))
        work = arr
        if abs(scale - 1.0) > 1e-3:
            import cv2

            size = (max(1, round(width * scale)), max(1, round(height * scale)))
            work = cv2.resize(arr, size, interpolation=cv2.INTER_CUBIC if scale > 1 else cv2.INTER_AREA)
        with self._lock:
            self._load_locked()
            result = self._engine(work[:, :, ::-1].copy(), box_thresh=thresh)  # RapidOCR expects BGR arrays
        boxes, txts, scores = (
            getattr(result, "boxes", None),
            getattr(result, "txts", None),
            getattr(result, "scores", None),
        )
        if boxes is None or txts is None or scores is None:
            return ()
        regions: list[TextRegion] = []
        for poly, text, score in zip(boxes, txts, scores, strict=True):
            pts = np.asarray(poly, dtype=np.float64) / scale
            box = _polygon_box(pts, width, height, float(score))
            if box is None or not str(text).strip():
                continue
            polygon = tuple((round(float(x), 1), round(float(y), 1)) for x, y in pts)
            regions.append(TextRegion(box=box, text=str(text).strip(), score=float(score), polygon=polygon))
        return tuple(regions)


class _OcrTool(Tool):
    """Shared by the OCR tools: one (possibly shared) reader, loaded once, and a read that fails loudly on no text."""

    def __init__(self, spec: ToolSpec, reader: RapidOcrReader | None = None) -> None:
        super().__init__(spec)
        self.reader = reader if reader is not None else RapidOcrReader()

    def load(self) -> None:
        self.reader.load()

    def _read(self, state: EditState, params: Mapping[str, Any]) -> tuple[TextRegion, ...]:
        thresh, factor = _ocr_params(params)
        regions = self.reader.read(state.image, box_thresh=thresh, upscale=factor)
        if not regions:
            raise ToolError(
                f"no text found in the {state.width}x{state.height} image (box_thresh={thresh}, upscale={factor})"
            )
        return regions


class RapidOcrDetector(_OcrTool):
    """Find every text line in the image (boxes, polygons, what it says, confidence).

    Params: `box_thresh` (detector confidence, default 0.5, retry 0.3) and `upscale` (enlargement for small text,
    default 1, retry 2).
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        regions = self._read(state, params)
        return ToolOutput(artifacts={"text_regions": regions}, notes=f"{len(regions)} text line(s) found")


class RapidOcrExtractor(_OcrTool):
    """Read the image's text in reading order (top to bottom, left to right), or only the lines matching the target.

    Params as `RapidOcrDetector`. Lines are separated by newlines, regions on one line by a space.
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        regions = self._read(state, params)
        if clean_target(subtask.target) is not None:
            matches = find_matches(regions, subtask.target)
            if not matches:
                read = "; ".join(repr(r.text) for r in regions[:8])
                raise ToolError(f"no text matching {subtask.target!r}; read {read}")
            if semantic_kind(subtask.target) is not None:
                # A kind of text ("phone number") yields just the matched spans, not the lines around them.
                regions = tuple(TextRegion(box=m.box, text=m.text, score=m.region.score) for m in matches)
            else:
                regions = _unique(m.region for m in matches)
        return ToolOutput(artifacts={"text": join_lines(regions)}, notes=f"read {len(regions)} line(s)")


# --------------------------------------------------------------------------------------------------------- helpers


def _ocr_params(params: Mapping[str, Any]) -> tuple[float, float]:
    return float_param(params, "box_thresh"), float_param(params, "upscale")


def _check_params(box_thresh: float, upscale: float) -> None:
    if not 0.0 < box_thresh < 1.0:
        raise InputError(f"box_thresh must be in (0, 1), got {box_thresh}")
    if not 1.0 <= upscale <= 4.0:
        raise InputError(f"upscale must be in [1, 4], got {upscale}")


def _as_rgb(image: object) -> np.ndarray:
    if not isinstance(image, np.ndarray) or image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        shape = getattr(image, "shape", None)
        raise InputError(f"OCR needs an RGB uint8 (H, W, 3) array, got shape {shape}")
    return image


def _polygon_box(pts: np.ndarray, width: int, height: int, score: float) -> Box | None:
    x1 = max(0, math.floor(float(pts[:, 0].min())))
    y1 = max(0, math.floor(float(pts[:, 1].min())))
    x2 = min(width, math.ceil(float(pts[:, 0].max())))
    y2 = min(height, math.ceil(float(pts[:, 1].max())))
    if x2 <= x1 or y2 <= y1:
        return None
    return Box(x1, y1, x2 - x1, y2 - y1, score=score)


def _unique(regions: Iterable[TextRegion]) -> tuple[TextRegion, ...]:
    out: list[TextRegion] = []
    for r in regions:
        if not any(r is seen for seen in out):
            out.append(r)
    return tuple(out)
