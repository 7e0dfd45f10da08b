"""Stable Diffusion inpainting through diffusers: removal, replacement, addition, recolouring, outpainting.

Every tool here shares one loaded inpainting pipeline (the model cache key is the weights' path), and edits at the
image's native resolution: it cuts a window around the target (with context margin), resizes the window to the
model's resolution, inpaints it, resizes the result back and pastes it through a feathered mask. Pixels farther than
the feather from the target are returned bit-for-bit unchanged, however large the photo (the layer idea of Agent
Banana, arXiv 2602.09084). Seeds come from the parameters (recorded with every call), so the same seed gives the same
pixels; progress is reported after every denoising step and Stop is honoured between steps.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from costa.errors import ToolError
from costa.masks import dilate_mask, union_masks
from costa.models import control
from costa.models.device import Device
from costa.tools.grounding_dino import noun_phrase
from costa.tools.neural import NeuralTool, local_only
from costa.tools.params import float_param, int_param
from costa.types import EditState, Subtask, ToolOutput

#: Context around the target, as a share of the target's larger side, and at least this many pixels.
CONTEXT_SHARE = 0.5
MIN_CONTEXT_PX = 32


def load_inpaint_pipeline(path: Path, dev: Device, allow_downloads: bool = False) -> Any:
    """A diffusers inpainting pipeline from a snapshot folder, on `dev` in its dtype, safety checker off."""
    from diffusers import AutoPipelineForInpainting

    pipe = AutoPipelineForInpainting.from_pretrained(
        path,
        torch_dtype=dev.torch_dtype(),
        safety_checker=None,
        requires_safety_checker=False,
        **local_only(allow_downloads),
    )
    pipe.set_progress_bar_config(disable=True)
    return pipe.to(dev.name)


@dataclass(frozen=True)
class Window:
    """The crop edited at model resolution: rows y1:y2, columns x1:x2 of the image; model input size (w, h) px."""

    y1: int
    y2: int
    x1: int
    x2: int
    model_w: int
    model_h: int


def edit_window(mask: np.ndarray, resolution: int, feather_px: int) -> Window:
    """The target's bounding box grown by context and feather, clipped to the image; model size ≤ `resolution`.

    The model size keeps the window's aspect ratio, its longer side is `resolution` and both sides are multiples of 8
    (the VAE's factor). Windows smaller than the resolution are upsampled, so small targets get the model's detail.
    """
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        raise ToolError("the region to inpaint is empty")
    h, w = mask.shape
    bw, bh = int(xs.max() - xs.min() + 1), int(ys.max() - ys.min() + 1)
    pad = max(MIN_CONTEXT_PX, round(CONTEXT_SHARE * max(bw, bh))) + 2 * feather_px
    y1, y2 = max(0, int(ys.min()) - pad), min(h, int(ys.max()) + 1 + pad)
    x1, x2 = max(0, int(xs.min()) - pad), min(w, int(xs.max()) + 1 + pad)
    ww, wh = x2 - x1, y2 - y1
    scale = resolution / max(ww, wh)
    mw = max(8, round(ww * scale / 8) * 8)
    mh = max(8, round(wh * scale / 8) * 8)
    return Window(y1, y2, x1, x2, mw, mh)


def feather(mask: np.ndarray, feather_px: int) -> np.ndarray:
    """Blend weights in [0, 1]: 1 on the mask, falling to exactly 0 within `feather_px` outside it."""
    import cv2

    if feather_px <= 0:
        return mask.astype(np.float32)
    grown = dilate_mask(mask, feather_px / 2).astype(np.float32)
    k = 2 * (feather_px // 2) + 1
    alpha = cv2.GaussianBlur(grown, (k, k), 0, borderType=cv2.BORDER_CONSTANT)
    alpha = np.maximum(alpha, mask.astype(np.float32))
    alpha[~dilate_mask(mask, feather_px)] = 0.0  # nothing beyond the feather changes, bit for bit
    return alpha


def paste(image: np.ndarray, generated: np.ndarray, alpha: np.ndarray, win: Window) -> np.ndarray:
    """`image` with `generated` (the window's size) blended in by `alpha` (the image's size); untouched elsewhere."""
    out = image.copy()
    a = alpha[win.y1 : win.y2, win.x1 : win.x2, None]
    crop = image[win.y1 : win.y2, win.x1 : win.x2].astype(np.float32)
    blended = np.rint(crop * (1.0 - a) + generated.astype(np.float32) * a).astype(np.uint8)
    out[win.y1 : win.y2, win.x1 : win.x2] = np.where(a > 0, blended, image[win.y1 : win.y2, win.x1 : win.x2])
    return out


def diffusion_callback(total_hint: int):  # -> Callable for diffusers' callback_on_step_end
    """Report each finished step and stop between steps when the user pressed Stop."""

    def on_step_end(pipe: Any, i: int, t: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
        total = int(getattr(pipe, "num_timesteps", 0) or total_hint)
        control.step(i + 1, total)
        return kwargs

    return on_step_end


class SdInpaintTool(NeuralTool):
    """Shared behaviour: region → window → inpaint at model resolution → feathered paste.

    Params:
        guidance_scale: classifier-free guidance, in [1, 20].
        strength: how much of the window's masked content is re-noised, in (0, 1].
        seed: the random seed (recorded; the same seed gives the same pixels).
        steps: denoising steps, in [1, 150].
        resolution: longer side of the model input in pixels; 0 = the model's native size (512 for SD 2).
        feather_px: width of the blend beyond the target in image pixels.
    """

    def pipeline(self) -> Any:
        """The inpainting pipeline shared by every inpainting tool, loaded on first use."""
        allow = self.current_settings().allow_downloads
        return self.shared_model("sd_inpaint", self.weights_path(), lambda p, d: load_inpaint_pipeline(p, d, allow))

    def load(self) -> None:
        self.pipeline()

    def region(self, state: EditState, subtask: Subtask) -> np.ndarray:
        masks = state.artifacts.get("masks")
        if not masks:
            raise ToolError("no mask of the target to inpaint")
        return union_masks(masks, state.height, state.width)

    def prompts(self, subtask: Subtask) -> tuple[str, str]:
        """(prompt, negative prompt) for the subtask."""
        noun = noun_phrase(subtask.target) or "object"
        if subtask.kind == "object_removal":
            return "empty background, seamless continuation of the surroundings", f"{noun}, object, text"
        if subtask.kind == "object_recoloration":
            if not subtask.result:
                raise ToolError("recolouring needs the new colour")
            return f"a {subtask.result} {noun}, same shape and lighting", "different object"
        if not subtask.result:
            raise ToolError(f"{subtask.kind} needs what to paint (the new object)")
        return f"a {noun_phrase(subtask.result) or subtask.result}, photorealistic, matching light", "blurry, text"

    def inpaint(
        self, image: np.ndarray, mask: np.ndarray, prompt: str, negative: str, params: Mapping[str, Any]
    ) -> tuple[np.ndarray, np.ndarray, str]:
        """(new image, edited region, notes) after inpainting `mask` of `image` with `prompt`."""
        import torch
        from PIL import Image

        guidance = float_param(params, "guidance_scale")
        strength = float_param(params, "strength")
        seed = int_param(params, "seed")
        steps = int_param(params, "steps")
        resolution = int_param(params, "resolution")
        feather_px = int_param(params, "feather_px")
        control.check_stop()
        pipe = self.pipeline()
        if resolution == 0:  # the model's native size: UNet sample size x VAE factor (512 for SD 2, 1024 for SDXL)
            resolution = int(pipe.unet.config.sample_size) * int(getattr(pipe, "vae_scale_factor", 8))
        win = edit_window(mask, resolution, feather_px)
        crop = image[win.y1 : win.y2, win.x1 : win.x2]
        crop_mask = dilate_mask(mask, max(2, feather_px // 2))[win.y1 : win.y2, win.x1 : win.x2]
        size = (win.model_w, win.model_h)
        model_image = Image.fromarray(crop).resize(size, Image.Resampling.LANCZOS)
        model_mask = Image.fromarray(crop_mask.astype(np.uint8) * 255).resize(size, Image.Resampling.NEAREST)
        generator = torch.Generator(device="cpu").manual_seed(seed)
        with torch.inference_mode():
            result = pipe(
                prompt=prompt,
                negative_prompt=negative or None,
                image=model_image,
                mask_image=model_mask,
                width=win.model_w,
                height=win.model_h,
                num_inference_steps=steps,
                guidance_scale=guidance,
                strength=strength,
                generator=generator,
                callback_on_step_end=diffusion_callback(steps),
                output_type="np",
            )
        out = np.clip(np.rint(result.images[0] * 255.0), 0, 255).astype(np.uint8)
        generated = np.asarray(Image.fromarray(out).resize((crop.shape[1], crop.shape[0]), Image.Resampling.LANCZOS))
        alpha = feather(mask, feather_px)
        new = paste(image, generated, alpha, win)
        notes = (
            f"inpainted a {win.x2 - win.x1}x{win.y2 - win.y1} window at {win.model_w}x{win.model_h}, "
            f"{steps} steps, seed {seed}, prompt {prompt!r}"
        )
        return new, alpha > 0, notes

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        mask = self.region(state, subtask)
        prompt, negative = self.prompts(subtask)
        image, edited, notes = self.inpaint(state.image, mask, prompt, negative, params)
        return ToolOutput(image=image, edited_region=edited, notes=notes)


class SdInpainter(SdInpaintTool):
    """Inpaint the target's mask: remove it, replace it with the subtask's result, or recolour it (`sd_inpaint`)."""


class SdObjectAdder(SdInpaintTool):
    """Paint a described object into the user's box, or into a free area low in the middle (`sd_add_object`)."""

    def region(self, state: EditState, subtask: Subtask) -> np.ndarray:
        boxes = state.artifacts.get("boxes")
        masks = state.artifacts.get("masks")
        if masks:
            return union_masks(masks, state.height, state.width)
        if boxes:
            return boxes[0].to_mask(state.height, state.width)
        h, w = state.height, state.width  # a free area: the lower middle third, where objects usually stand
        mask = np.zeros((h, w), dtype=bool)
        mask[h // 2 : h * 5 // 6, w // 3 : w * 2 // 3] = True
        return mask

    def prompts(self, subtask: Subtask) -> tuple[str, str]:
        what = subtask.result or subtask.target
        if not what:
            raise ToolError("object addition needs the object to add")
        return f"a {noun_phrase(what) or what}, photorealistic, matching light and perspective", "blurry, text"


class SdOutpainter(SdInpaintTool):
    """Extend the canvas ("16:9", "50%", a direction) and paint the new border with inpainting (`sd_outpaint`).

    The original pixels are kept exactly; the border is generated from a mirrored start at model resolution.
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        from costa.tools.outpaint import _mirror, _place_original, _plan

        margins, _, _, new = _plan(self, state, subtask)
        canvas = _mirror(state.image, margins)
        hard = {**params, "feather_px": 0}
        image, _, notes = self.inpaint(canvas, new, "a seamless continuation of the photo", "frame, border", hard)
        image = _place_original(image, state.image, margins)
        return ToolOutput(image=image, edited_region=new, notes="outpainted: " + notes)


class SdObjectMover(SdInpaintTool):
    """Move the masked object the way the subtask says, or make it larger or smaller, and inpaint what it leaves.

    Params (besides the inpainting ones of `SdInpaintTool`):
        shift: default move as a share of the image's width/height (a "20%" in the request overrides it).
        scale_step: size factor of a plain "larger" (1/scale_step for "smaller"; params.scale overrides it).
        seam_px: width of the ring around the pasted object's outline that is inpainted to hide the seam.
    """

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        masks = state.artifacts.get("masks")
        if not masks:
            raise ToolError("no mask of the object to move")
        mask = union_masks(masks, state.height, state.width)
        from costa.tools.move import parse_relocation, place_object

        where = parse_relocation(subtask, float_param(params, "shift"), float_param(params, "scale_step"))
        placed = place_object(state.image, mask, where)
        seam = int_param(params, "seam_px")
        hole = dilate_mask(mask, 2) & ~placed.mask
        ring = dilate_mask(placed.mask, seam) & ~placed.mask if seam > 0 else np.zeros_like(mask)
        region = hole | ring
        noun = noun_phrase(subtask.target) or "object"
        if region.any():
            image, edited, notes = self.inpaint(
                placed.image,
                region,
                "empty background, seamless continuation of the surroundings",
                f"{noun}, object, text",
                params,
            )
        else:
            image, edited, notes = placed.image, np.zeros_like(mask), "nothing to inpaint"
        image[placed.mask] = placed.image[placed.mask]  # the object's pixels exactly, whatever the feather blended
        nx, ny, nw, nh = placed.box
        what = f"moved by ({where.dx:+.0%}, {where.dy:+.0%})" if where.scale == 1.0 else f"scaled ×{where.scale:.2f}"
        return ToolOutput(
            image=image,
            edited_region=edited | placed.mask,
            notes=f"{noun} {what} to {nx},{ny} ({nw}x{nh}); " + notes,
        )
