"""Object recolouring inside masks: a shading-preserving CIELAB recolourer and a cheaper HSV hue swap.

Both read the target colour from `subtask.result` (a name, `#rrggbb` or `rgb(r,g,b)`; see `costa.colours`) and the
object from the union of the state's masks. Both feather the mask edge outward by a few pixels so anti-aliased
object borders are recoloured too, and report that feathered region as `edited_region`; pixels outside it are
returned bit-for-bit unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from costa.colours import colour_name, parse_colour, rgb_to_lab
from costa.errors import ToolError
from costa.masks import bounding_slice, union_masks
from costa.tools.base import Tool
from costa.tools.params import float_param
from costa.types import EditState, Subtask, ToolOutput

# Alpha values below this are treated as 0 so the edited region is exactly where a pixel can change (1/255 of a step).
_ALPHA_FLOOR = 1.0 / 255.0
# Never squeeze the object's lightness variation below half of the original to fit the target into [0, 100]: past
# that point the shading is visibly flattened, so the mean lightness gives way instead (e.g. "white" lands at L≈92).
_MIN_SHADING_SCALE = 0.5


def _target_rgb(subtask: Subtask) -> tuple[int, int, int]:
    rgb = parse_colour(subtask.result or "")
    if rgb is None:
        raise ToolError(
            f"cannot recolour: {subtask.result!r} is not a colour I know (try a name, #rrggbb or rgb(r,g,b))"
        )
    return rgb


def _object_mask(state: EditState) -> np.ndarray:
    masks = state.artifacts.get("masks")
    if not masks:
        raise ToolError("cannot recolour: no object mask in the state (a segmentation step must run first)")
    union = union_masks(masks, state.height, state.width)
    if not union.any():
        raise ToolError("cannot recolour: the object mask is empty")
    return union


def feather_alpha(mask: np.ndarray, feather_px: float) -> np.ndarray:
    """Return a float32 (H, W) blend weight: 1 on the mask, falling to 0 about `2·feather_px` pixels outside it.

    A Gaussian blur (σ = `feather_px`) centres the ramp on the edge; doubling it moves the ramp outward so every mask
    pixel is fully recoloured and only the border just outside is blended. Weights under 1/255 are zeroed.
    """
    alpha = mask.astype(np.float32)
    if feather_px > 0:
        import cv2

        blurred = cv2.GaussianBlur(alpha, (0, 0), sigmaX=feather_px, borderType=cv2.BORDER_REPLICATE)
        alpha = np.maximum(alpha, np.clip(2.0 * blurred, 0.0, 1.0))
    alpha[alpha < _ALPHA_FLOOR] = 0.0
    return alpha


def _crop_for(alpha_support: np.ndarray) -> tuple[slice, slice]:
    return bounding_slice(alpha_support, pad_px=1)


class LabRecolorer(Tool):
    """Recolour the masked object in CIELAB, keeping its shading (`recolor_lab`).

    a*/b* are set to the target's, and L* is shifted so the object's mean lightness matches the target's while each
    pixel keeps its offset from that mean (the shading). When the target is near white or black and the offsets would
    leave [0, 100], they are scaled down (not below half) and then the mean gives way, so shading survives.

    Params:
        strength: 0–1, how far each pixel moves toward its recoloured value (1 = fully).
        feather: σ in pixels of the outward edge feather (0 = hard edge).
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        strength = float_param(params, "strength")
        feather = float_param(params, "feather")
        rgb = _target_rgb(subtask)
        mask = _object_mask(state)
        alpha = feather_alpha(mask, feather)
        region = alpha > 0
        ys, xs = _crop_for(region)

        import cv2

        crop = state.image[ys, xs]
        lab = cv2.cvtColor(crop.astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)
        inside = mask[ys, xs]
        target_l, target_a, target_b = rgb_to_lab(rgb)

        lightness = lab[..., 0]
        mean_l = float(lightness[inside].mean())
        offsets = lightness - mean_l
        scale, new_mean = _fit_shading(offsets[inside], target_l)
        recoloured = np.empty_like(lab)
        recoloured[..., 0] = np.clip(new_mean + scale * offsets, 0.0, 100.0)
        recoloured[..., 1] = target_a
        recoloured[..., 2] = target_b

        weight = (strength * alpha[ys, xs])[..., None]
        blended = lab + weight * (recoloured - lab)
        rgb_out = cv2.cvtColor(blended.astype(np.float32), cv2.COLOR_Lab2RGB)
        rgb_out = np.clip(np.rint(rgb_out * 255.0), 0, 255).astype(np.uint8)

        out = state.image.copy()
        sub = out[ys, xs]
        sub[region[ys, xs]] = rgb_out[region[ys, xs]]
        return ToolOutput(
            image=out,
            edited_region=region,
            notes=f"recoloured {int(mask.sum())} px to {colour_name(rgb)} {rgb} in CIELAB "
            f"(shading scale {scale:.2f}, mean L {mean_l:.0f}→{new_mean:.0f})",
        )


def _fit_shading(offsets: np.ndarray, target_l: float) -> tuple[float, float]:
    """Choose the shading scale and mean lightness so `mean + scale·offset` stays within L* ∈ [0, 100].

    Uses the 1st/99th percentiles of the offsets so a few specular pixels do not flatten everything.

    Returns:
        (scale in (0, 1], new mean L*).
    """
    above = max(float(np.percentile(offsets, 99)), 0.0)
    below = max(-float(np.percentile(offsets, 1)), 0.0)
    scale = 1.0
    if above + below > 100.0:
        scale = 100.0 / (above + below)
    fit = min(
        (100.0 - target_l) / above if above > 0 else np.inf,
        target_l / below if below > 0 else np.inf,
    )
    scale = min(scale, max(fit, _MIN_SHADING_SCALE))
    new_mean = float(np.clip(target_l, scale * below, 100.0 - scale * above))
    return scale, new_mean


class HsvRecolorer(Tool):
    """Swap the masked object's hue in HSV (`recolor_hsv`): fast and crude.

    Hue becomes the target's, saturation is mixed toward the target's, value (brightness) is kept. It cannot make a
    dark object light or a coloured one white/grey/black convincingly, which its check score shows.

    Params:
        saturation_mix: 0–1, weight of the target's saturation in the mix (1 = replace).
        feather: σ in pixels of the outward edge feather (0 = hard edge).
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        mix = float_param(params, "saturation_mix")
        feather = float_param(params, "feather")
        rgb = _target_rgb(subtask)
        mask = _object_mask(state)
        alpha = feather_alpha(mask, feather)
        region = alpha > 0
        ys, xs = _crop_for(region)

        import cv2

        crop = state.image[ys, xs]
        hsv = cv2.cvtColor(crop.astype(np.float32) / 255.0, cv2.COLOR_RGB2HSV)  # H in degrees, S and V in [0, 1]
        target = cv2.cvtColor(np.array([[rgb]], dtype=np.float32) / 255.0, cv2.COLOR_RGB2HSV)[0, 0]
        new = hsv.copy()
        new[..., 0] = target[0]
        new[..., 1] = (1.0 - mix) * hsv[..., 1] + mix * target[1]
        swapped = cv2.cvtColor(new, cv2.COLOR_HSV2RGB) * 255.0

        weight = alpha[ys, xs][..., None]
        blended = crop.astype(np.float32) + weight * (swapped - crop.astype(np.float32))
        blended = np.clip(np.rint(blended), 0, 255).astype(np.uint8)

        out = state.image.copy()
        sub = out[ys, xs]
        sub[region[ys, xs]] = blended[region[ys, xs]]
        return ToolOutput(
            image=out,
            edited_region=region,
            notes=f"swapped hue of {int(mask.sum())} px to {colour_name(rgb)} {rgb} in HSV",
        )
