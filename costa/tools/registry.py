"""Tool id → "module:Class". Imported on demand so `import costa` stays light.

Only tools with status `ready` in tool_tables/tools.yaml have an entry; a test keeps the two in agreement both ways
and checks each class's call signature.
"""

from __future__ import annotations

import importlib
from types import MappingProxyType

from costa.errors import TableError

REGISTRY = MappingProxyType(
    {
        "rapidocr_detect": "costa.tools.ocr:RapidOcrDetector",
        "rapidocr_read": "costa.tools.ocr:RapidOcrExtractor",
        "text_replace_pillow": "costa.tools.text_edit:PillowTextReplacer",
        "text_replace_inpaint": "costa.tools.text_edit:InpaintTextReplacer",
        "text_add_pillow": "costa.tools.text_edit:PillowTextWriter",
        "text_redact_box": "costa.tools.text_edit:TextRedactor",
        "keyword_highlight": "costa.tools.text_edit:KeywordHighlighter",
        "text_remove_telea": "costa.tools.text_removal:TeleaTextRemover",
        "text_remove_patchmatch": "costa.tools.text_removal:PatchMatchTextRemover",
        "grabcut_segment": "costa.tools.segment:GrabCutSegmenter",
        "box_mask": "costa.tools.segment:BoxMasker",
        "recolor_lab": "costa.tools.recolor:LabRecolorer",
        "recolor_hsv": "costa.tools.recolor:HsvRecolorer",
        "remove_patchmatch": "costa.tools.removal:PatchMatchRemover",
        "remove_telea": "costa.tools.removal:TeleaRemover",
        "realesrgan": "costa.tools.upscale:RealEsrganUpscaler",
        "lanczos_upscale": "costa.tools.upscale:LanczosUpscaler",
        "unsharp_deblur": "costa.tools.deblur:UnsharpDeblurrer",
        "wiener_deblur": "costa.tools.deblur:WienerDeblurrer",
        "reflect_outpaint": "costa.tools.outpaint:ReflectOutpainter",
        "patchmatch_outpaint": "costa.tools.outpaint:PatchMatchOutpainter",
        "global_adjust": "costa.tools.adjust:GlobalAdjuster",
        "points_grabcut": "costa.tools.pointing:PointGrabCutSegmenter",
        "colour_grounder": "costa.tools.colour_ground:ColourGrounder",
        "haar_faces": "costa.tools.faces:HaarFaceDetector",
        "hog_people": "costa.tools.people:HogPeopleDetector",
        "blur_region": "costa.tools.privacy:GaussianRegionBlurrer",
        "pixelate_region": "costa.tools.privacy:RegionPixelator",
        "grabcut_background": "costa.tools.background:GrabCutBackgroundRemover",
        "mask_background": "costa.tools.background:MaskBackgroundRemover",
        "grounding_dino": "costa.tools.grounding_dino:GroundingDinoDetector",
        "sam": "costa.tools.sam:SamSegmenter",
        "sam_points": "costa.tools.sam:SamSegmenter",
        "sam_segment_anything": "costa.tools.sam:SegmentAnythingSegmenter",
        "sd_inpaint": "costa.tools.inpaint:SdInpainter",
        "sd_add_object": "costa.tools.inpaint:SdObjectAdder",
        "sd_outpaint": "costa.tools.inpaint:SdOutpainter",
        "instruct_pix2pix": "costa.tools.pix2pix:InstructPix2PixEditor",
        "llm_caption": "costa.tools.llm_tools:LlmCaptioner",
        "llm_landmark": "costa.tools.llm_tools:LlmLandmarkNamer",
        "llm_text_qa": "costa.tools.llm_tools:LlmTextAnswerer",
        "llm_sentiment": "costa.tools.llm_tools:LlmSentimentClassifier",
        "llm_caption_check": "costa.tools.llm_tools:LlmCaptionChecker",
    }
)


def tool_class(tool_id: str) -> type:
    """Import and return the class implementing `tool_id`."""
    try:
        target = REGISTRY[tool_id]
    except KeyError as e:
        raise TableError(f"tool {tool_id!r} has no implementation in costa/tools/registry.py") from e
    module, _, cls = target.partition(":")
    return getattr(importlib.import_module(module), cls)
