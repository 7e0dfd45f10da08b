"""`box_crop` and the image_cropping check: the crop is exactly the source region, of the asked box or aspect."""

from __future__ import annotations

import numpy as np
import pytest

from costa.checks import CheckContext
from costa.checks.geometry import check_cropping
from costa.errors import ToolError
from costa.tables import load_tables
from costa.tools.crop import BoxCropper, parse_aspect
from costa.types import Box, EditState, Subtask, ToolOutput

CTX = CheckContext(reader=None)  # type: ignore[arg-type]  # the geometry checks read no text


def _image(h: int = 120, w: int = 200) -> np.ndarray:
    rng = np.random.default_rng(3)
    return rng.integers(0, 256, (h, w, 3), dtype=np.uint8)


def _tool() -> BoxCropper:
    return BoxCropper(load_tables().tools["box_crop"])


def _judge(sub: Subtask, before: EditState, out: ToolOutput) -> float:
    return check_cropping(CTX, sub, before, before.with_output(out), out).quality


def test_crop_to_a_box_with_margin_equals_the_source_region() -> None:
    image = _image()
    before = EditState(image, {"boxes": (Box(50, 30, 40, 20, "dog"),)})
    sub = Subtask(id="s", kind="image_cropping", target="dog")
    out = _tool()(before, sub, {"margin": 0.25})
    assert out.image is not None
    assert out.image.shape == (30, 60, 3)  # 40x20 grown by 10 px and 5 px on each side
    assert np.array_equal(out.image, image[25:55, 40:100])
    assert _judge(sub, before, out) == 1.0


@pytest.mark.parametrize(("result", "ratio"), [("square", 1.0), ("16:9", 16 / 9), ("4:3", 4 / 3), ("portrait", 0.75)])
def test_crop_to_an_aspect_is_the_largest_centred_one(result: str, ratio: float) -> None:
    image = _image()
    sub = Subtask(id="s", kind="image_cropping", result=result)
    out = _tool()(EditState(image), sub, {})
    assert out.image is not None
    h, w = out.image.shape[:2]
    assert abs(w / h - ratio) < 0.02 and (h == 120 or w == 200)
    assert _judge(sub, EditState(image), out) == 1.0


def test_box_and_aspect_together_keep_the_box_inside() -> None:
    image = _image()
    before = EditState(image, {"boxes": (Box(150, 10, 40, 30),)})
    sub = Subtask(id="s", kind="image_cropping", result="square")
    out = _tool()(before, sub, {"margin": 0.0})
    assert out.image is not None and out.image.shape[:2] == (40, 40)
    assert np.array_equal(out.image, image[5:45, 150:190])
    assert _judge(sub, before, out) == 1.0


def test_bad_boxes_and_words_fail_loudly_naming_the_value() -> None:
    image = _image()
    with pytest.raises(ToolError, match=r"box x=180 y=10 w=40 h=30: it is not inside the 200x120 image"):
        _tool()(EditState(image, {"boxes": (Box(180, 10, 40, 30),)}), Subtask(id="s", kind="image_cropping"), {})
    with pytest.raises(ToolError, match="cannot crop to 'banana'"):
        _tool()(EditState(image), Subtask(id="s", kind="image_cropping", result="banana"), {})
    with pytest.raises(ToolError, match="no box of it"):
        _tool()(EditState(image), Subtask(id="s", kind="image_cropping", target="dog"), {})
    with pytest.raises(ToolError, match="both sides must be positive"):
        parse_aspect("0:3")


def test_the_check_fails_a_changed_resized_wrong_shaped_or_box_missing_crop() -> None:
    image = _image()
    before = EditState(image, {"boxes": (Box(50, 30, 40, 20),)})
    sub = Subtask(id="s", kind="image_cropping")
    good = image[20:60, 40:100].copy()
    assert _judge(sub, before, ToolOutput(image=good)) == 1.0
    brighter = np.clip(good.astype(np.int16) + 3, 0, 255).astype(np.uint8)
    assert _judge(sub, before, ToolOutput(image=brighter)) <= 0.5  # pixels changed: not a crop
    assert _judge(sub, before, ToolOutput(image=image[0:40, 100:200].copy())) == 0.0  # the box is not in it
    square = Subtask(id="s", kind="image_cropping", result="square")
    assert _judge(square, before, ToolOutput(image=good)) == 0.0  # 60x40 is no square
    assert _judge(sub, before, ToolOutput(image=image.copy())) == 0.0


def test_no_box_no_ratio_trims_the_edges() -> None:
    image = _image()
    out = _tool()(EditState(image), Subtask(id="s", kind="image_cropping"), {"margin": 0.1})
    assert out.image is not None and np.array_equal(out.image, image[12:108, 20:180])
