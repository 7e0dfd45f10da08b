"""Instruction-guided whole-image edits with InstructPix2Pix through diffusers (`instruct_pix2pix`).

Changing scenery or style touches every pixel, so the image is resized to the model's resolution (longer side),
edited, and resized back; seeds, per-step progress and Stop behave as for the inpainting tools.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from costa.errors import ToolError
from costa.models import control
from costa.models.device import Device
from costa.tools.inpaint import diffusion_callback
from costa.tools.neural import NeuralTool, local_only
from costa.tools.params import float_param, int_param
from costa.types import EditState, Subtask, ToolOutput


def load_pix2pix_pipeline(path: Path, dev: Device, allow_downloads: bool = False) -> Any:
    from diffusers import StableDiffusionInstructPix2PixPipeline

    pipe = StableDiffusionInstructPix2PixPipeline.from_pretrained(
        path,
        torch_dtype=dev.torch_dtype(),
        safety_checker=None,
        requires_safety_checker=False,
        **local_only(allow_downloads),
    )
    pipe.set_progress_bar_config(disable=True)
    return pipe.to(dev.name)


class InstructPix2PixEditor(NeuralTool):
    """Apply the subtask's instruction ("make it winter") to the whole image.

    Params:
        guidance_scale: text guidance in [1, 20].
        image_guidance_scale: how closely the result follows the input image, in [1, 5].
        seed: random seed (recorded; same seed, same pixels).
        steps: denoising steps in [1, 150].
        resolution: longer side of the model input in px; 0 = the model's native size (512).
    """

    def pipeline(self) -> Any:
        allow = self.current_settings().allow_downloads
        return self.shared_model("pix2pix", self.weights_path(), lambda p, d: load_pix2pix_pipeline(p, d, allow))

    def load(self) -> None:
        self.pipeline()

    def run(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        import torch
        from PIL import Image

        guidance = float_param(params, "guidance_scale")
        image_guidance = float_param(params, "image_guidance_scale")
        seed = int_param(params, "seed")
        steps = int_param(params, "steps")
        resolution = int_param(params, "resolution")
        instruction = subtask.result or subtask.target
        if not instruction:
            raise ToolError("changing scenery needs the new scene (e.g. 'winter')")
        control.check_stop()
        pipe = self.pipeline()
        if resolution == 0:
            resolution = int(pipe.unet.config.sample_size) * int(getattr(pipe, "vae_scale_factor", 8))
        scale = resolution / max(state.width, state.height)
        mw, mh = max(8, round(state.width * scale / 8) * 8), max(8, round(state.height * scale / 8) * 8)
        model_image = Image.fromarray(state.image).resize((mw, mh), Image.Resampling.LANCZOS)
        prompt = instruction if " " in instruction.strip() else f"make it {instruction}"
        with torch.inference_mode():
            result = pipe(
                prompt=prompt,
                image=model_image,
                num_inference_steps=steps,
                guidance_scale=guidance,
                image_guidance_scale=image_guidance,
                generator=torch.Generator(device="cpu").manual_seed(seed),
                callback_on_step_end=diffusion_callback(steps),
                output_type="np",
            )
        out = np.clip(np.rint(result.images[0] * 255.0), 0, 255).astype(np.uint8)
        back = np.asarray(Image.fromarray(out).resize((state.width, state.height), Image.Resampling.LANCZOS))
        return ToolOutput(
            image=back,
            edited_region=np.ones((state.height, state.width), dtype=bool),
            notes=f"InstructPix2Pix {prompt!r} at {mw}x{mh}, {steps} steps, seed {seed}",
        )
