"""The order in which the image rules are tried, after the text rules; the first that applies wins.

The rules live by family: `canvas_rules.py` (whole-image edits and queries, background removal), `adjust_rules.py`
(light and colour adjustments, scenery), `object_rules.py` (recolour, replace, remove, add, detect, segment),
`edit_rules.py` (attribute edits: sizes, materials, expressions, poses) and `view_rules.py` (moves, styles, viewpoints,
crops). A rule placed earlier wins where phrasings overlap ("make it look like a Van Gogh painting" is a style, not
a replacement of "it look like").
"""

from __future__ import annotations

from costa.planner.adjust_rules import global_adjustment_rule, scenery_rule
from costa.planner.canvas_rules import (
    background_blur_rule,
    background_removal_rule,
    caption_rule,
    deblur_rule,
    depth_rule,
    not_a_kind_rule,
    outpaint_rule,
    privacy_blur_rule,
    query_rule,
    upscale_rule,
)
from costa.planner.edit_rules import (
    count_rule,
    expression_rule,
    generic_edit_rule,
    look_rule,
    material_rule,
    orientation_rule,
    pose_rule,
    property_rule,
    size_rule,
)
from costa.planner.object_rules import (
    addition_rule,
    detection_rule,
    late_not_a_kind_rule,
    recolour_rule,
    removal_rule,
    replacement_rule,
)
from costa.planner.view_rules import cover_rule, crop_rule, move_rule, style_rule, viewpoint_rule

IMAGE_RULES = (
    background_blur_rule,
    privacy_blur_rule,
    deblur_rule,
    crop_rule,
    style_rule,
    size_rule,
    upscale_rule,
    outpaint_rule,
    caption_rule,
    depth_rule,
    query_rule,
    viewpoint_rule,
    background_removal_rule,
    not_a_kind_rule,
    count_rule,
    global_adjustment_rule,
    scenery_rule,
    expression_rule,
    material_rule,
    move_rule,
    pose_rule,
    orientation_rule,
    recolour_rule,
    property_rule,
    look_rule,
    replacement_rule,
    cover_rule,
    removal_rule,
    detection_rule,
    addition_rule,
    late_not_a_kind_rule,
    generic_edit_rule,
)
