"""Background removal and background blur: keep the subject, replace everything else by a plain fill (white by
default) or by a blurred copy of itself.

Two ways to know the subject: `grabcut_background` cuts it out of boxes (a user box, or people found by `hog_people`)
with GrabCut; `mask_background` takes masks as they are (a brush mask, a click segmented by `points_grabcut`, a colour
region). Images are RGB, so "transparent" is rendered as white and the note says so; the subject's pixels are returned
bit for bit unchanged and the background is the declared edited region. `mask_background_blur` blurs what the
masks do not cover (a portrait lens's shallow depth of field) by normalised convolution: only background pixels are
averaged, so the subject's colours never smear into a halo around it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from costa.colours import RGB, parse_colour
from costa.errors import ToolError
from costa.masks import union_masks
from costa.tools.base import Tool
from costa.tools.params import float_param, int_param, str_param
from costa.tools.segment import grabcut_in_box, state_boxes
from costa.types import EditState, Subtask, ToolOutput

#: Fill words the planner passes (`params.fill`) that mean "nothing there": rendered white.
_PLAIN_FILLS = frozenset({"white", "transparent", "plain", "blank", "empty", "none", ""})


def fill_colour(value: Any) -> tuple[RGB, str]:
    """The RGB to paint the background with and a note ("transparent shown as white" when it had to be).

    Raises:
        ToolError: `value` is not a fill word or a colour.
    """
    text = str(value).strip().lower() if value is not None else ""
    if text in _PLAIN_FILLS:
        note = "" if text in ("white", "") else f" ('{text}' shown as white: the output is RGB, without alpha)"
        return (255, 255, 255), note
    rgb = parse_colour(text)
    if rgb is None:
        raise ToolError(f"cannot fill the background with {value!r}: name a colour, or 'white'/'transparent'")
    return rgb, ""


def _require_subject(subject: np.ndarray, verb: str) -> None:
    """Raise `ToolError` ("cannot <verb> the background: …") when the subject mask is empty or the whole image."""
    if not subject.any():
        raise ToolError(f"cannot {verb} the background: the subject mask is empty")
    if subject.all():
        raise ToolError(f"cannot {verb} the background: the subject covers the whole image")


def replace_background(image: np.ndarray, subject: np.ndarray, rgb: RGB) -> tuple[np.ndarray, np.ndarray]:
    """(new image, background mask): pixels outside `subject` set to `rgb`, the subject untouched.

    Raises:
        ToolError: the subject is empty or is the whole image.
    """
    _require_subject(subject, "remove")
    background = ~subject
    out = image.copy()
    out[background] = np.asarray(rgb, np.uint8)
    return out, background


class GrabCutBackgroundRemover(Tool):
    """Cut the subject out of each box with GrabCut and paint the rest plain (`grabcut_background`).

    Params:
        iterations: GrabCut rounds.
        margin: pixels added around each box first (for boxes that clip the subject).
        fill: "white" (default), "transparent" (shown as white), "black" or any colour name.
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        iterations = int_param(params, "iterations")
        margin = int_param(params, "margin")
        rgb, note = fill_colour(str_param(params, "fill"))
        subject = np.zeros((state.height, state.width), dtype=bool)
        boxes = state_boxes(state)
        for box in boxes:
            subject |= grabcut_in_box(state.image, box, iterations, margin)
        out, background = replace_background(state.image, subject, rgb)
        return ToolOutput(
            image=out,
            edited_region=background,
            notes=f"kept the subject of {len(boxes)} box(es) ({subject.mean():.0%} of the image), "
            f"background filled with {rgb}{note}",
        )


class MaskBackgroundRemover(Tool):
    """Keep what the masks cover and paint the rest plain (`mask_background`).

    Params:
        fill: "white" (default), "transparent" (shown as white), "black" or any colour name.
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        rgb, note = fill_colour(str_param(params, "fill"))
        masks = state.artifacts.get("masks")
        if not masks:
            raise ToolError("cannot remove the background: no subject mask in the state (a click or a mask first)")
        subject = union_masks(masks, state.height, state.width)
        out, background = replace_background(state.image, subject, rgb)
        return ToolOutput(
            image=out,
            edited_region=background,
            notes=f"kept the masked subject ({subject.mean():.0%} of the image), background filled with {rgb}{note}",
        )


def blur_background(
    image: np.ndarray, subject: np.ndarray, sigma: float, feather: int
) -> tuple[np.ndarray, np.ndarray]:
    """(new image, background mask): the background blurred with a Gaussian of `sigma` pixels, averaging background
    pixels only; the first `feather` pixels beside the subject blend from sharp to blurred; the subject untouched.

    Raises:
        ToolError: the subject is empty or is the whole image.
    """
    import cv2

    _require_subject(subject, "blur")
    background = ~subject
    weight = background.astype(np.float32)
    total = cv2.GaussianBlur(weight, (0, 0), sigma, sigmaY=sigma, borderType=cv2.BORDER_REFLECT)
    summed = cv2.GaussianBlur(
        image.astype(np.float32) * weight[..., None], (0, 0), sigma, sigmaY=sigma, borderType=cv2.BORDER_REFLECT
    )
    blurred = summed / np.maximum(total, 1e-6)[..., None]
    if feather > 0:
        away = cv2.distanceTransform(background.astype(np.uint8), cv2.DIST_L2, 5)
        alpha = np.clip(away / float(feather), 0.0, 1.0)[..., None]
        blurred = alpha * blurred + (1.0 - alpha) * image.astype(np.float32)
    out = image.copy()
    out[background] = np.clip(np.rint(blurred[background]), 0, 255).astype(np.uint8)
    return out, background


class MaskBackgroundBlurrer(Tool):
    """Keep what the masks cover sharp and blur the rest (`mask_background_blur`).

    Params:
        sigma_share: the blur's Gaussian sigma as a share of the image's shorter side (0.012: about 6 px on a 512-px
            photo, 36 px on a 12 MP one: the same look at every size).
        feather: pixels of background beside the outline blended from sharp to blurred.
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        masks = state.artifacts.get("masks")
        if not masks:
            raise ToolError("cannot blur the background: no subject mask in the state (a click or a mask first)")
        subject = union_masks(masks, state.height, state.width)
        sigma = max(0.5, float_param(params, "sigma_share") * min(state.height, state.width))
        out, background = blur_background(state.image, subject, sigma, int_param(params, "feather"))
        return ToolOutput(
            image=out,
            edited_region=background,
            notes=f"kept the masked subject ({subject.mean():.0%} of the image) sharp, background blurred "
            f"(sigma {sigma:.1f} px)",
        )
