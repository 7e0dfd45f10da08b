"""Messages for people: what this build cannot do, in one plain sentence, with what would enable it.

The technical reason (which package, which weights file, which folder) stays available as the detail: the page puts
it behind a "details" fold and `costa edit -v` prints it; the sentence itself is built from the tables (which tools
serve the kind, their backends, whether they need weights or a GPU), never parsed out of the detail.

>>> from costa.tables import load_tables
>>> plain_unavailable(load_tables(), "object_addition")[:82]
'Adding an object needs a neural model that is not installed here (Stable Diffusion'
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from costa.tables import Tables
    from costa.types import Plan

#: What each kind is, said as a person would ("adding objects needs …").
_DOING = {
    "object_addition": "Adding an object", "object_replacement": "Replacing an object",
    "changing_scenery": "Changing the scenery", "style_transfer": "Changing the style",
    "attribute_edit": "Changing what an object is like (size, material, pose)", "object_move": "Moving an object",
    "viewpoint_change": "Changing the viewpoint", "image_captioning": "Describing the picture",
    "landmark_detection": "Recognising a landmark", "depth_estimation": "Estimating depth",
    "question_answering_text": "Answering questions about the text", "sentiment_analysis": "Judging the text's tone",
    "caption_consistency_check": "Checking a caption against the picture", "image_cropping": "Cropping",
}  # fmt: skip
#: Models by the name people know them by (tool id, else family).
_MODEL_NAMES = {
    "sd_inpaint": "Stable Diffusion inpainting", "sd_add_object": "Stable Diffusion inpainting",
    "sd_outpaint": "Stable Diffusion inpainting", "sd_object_move": "Stable Diffusion inpainting",
    "instruct_pix2pix": "InstructPix2Pix", "grounding_dino": "Grounding DINO", "sam": "SAM",
    "depth": "a depth model (DPT or Depth Anything)", "clip": "CLIP", "blip": "BLIP", "detr": "RT-DETR",
}  # fmt: skip


def plain_unavailable(tables: Tables, kind: str) -> str:
    """One sentence: what this build cannot do for `kind` and what would enable it ("Adding an object needs …")."""
    spec = tables.subtasks.get(kind)
    doing = _DOING.get(kind, spec.name if spec is not None else kind.replace("_", " ").capitalize())
    produces = spec.produces if spec is not None else "image"
    tools = [t for t in tables.tools.values() if kind in t.subtasks and produces in t.outputs]
    neural = [t for t in tools if t.backend == "neural" and t.status == "ready"]
    api = [t for t in tools if t.backend == "api" and t.status == "ready"]
    if neural:
        names = list(dict.fromkeys(_MODEL_NAMES.get(t.id, _MODEL_NAMES.get(t.family, t.family)) for t in neural))
        needs = f"a neural model that is not installed here ({' or '.join(names[:2])})"
        if any(t.requirements.gpu for t in neural):
            needs += " and a GPU to run in reasonable time"
        if api:
            needs += " — or an endpoint (OPENAI_BASE_URL with a model for it)"
        return f"{doing} needs {needs}: see Models in the page, or `python -m costa models list`."
    if api:
        return f"{doing} needs an LLM or image endpoint: set OPENAI_BASE_URL (and COSTA_LLM_MODEL) — see the README."
    return f"{doing} is not built into costa yet: no tool for it can run on this machine."


def plain_reasons(
    tables: Tables, plan: Plan, unavailable: Mapping[str, str], pointing: Collection[str] = ()
) -> dict[str, str]:
    """The plain sentence for each subtask with no ready tool path (those waiting for the user to point keep their
    own words: "click on the tower")."""
    return {
        s.id: plain_unavailable(tables, s.kind) for s in plan.subtasks if s.id in unavailable and s.id not in pointing
    }
