"""Clicks and boxes become regions the tools can start from."""

from __future__ import annotations

import numpy as np
import pytest

from costa.clicks import click_region
from costa.errors import InputError
from costa.pointing import brush_mask, describe_region, region_from_pointing
from costa.types import Point


def scene() -> np.ndarray:
    """A shaded red disc (centre 60,50, radius 25) on a grey background."""
    yy, xx = np.mgrid[0:100, 0:140]
    img = np.full((100, 140, 3), 200, np.uint8)
    inside = np.hypot(xx - 60, yy - 50) <= 25
    shade = np.clip(1.1 - np.hypot(xx - 50, yy - 40) / 60.0, 0.4, 1.0)
    img[inside] = (np.stack([210 * shade, 30 * shade, 30 * shade], -1)[inside]).astype(np.uint8)
    return img


def test_one_click_follows_shading_and_stops_at_the_edge() -> None:
    mask = click_region(scene(), 60, 50)
    disc = np.hypot(*np.mgrid[0:100, 0:140][::-1] - np.array([60, 50])[:, None, None]) <= 25
    assert (mask.data & disc).sum() / disc.sum() > 0.97
    assert (mask.data & ~disc).sum() == 0


def test_one_click_gives_a_mask_and_its_box_two_clicks_a_box() -> None:
    one = region_from_pointing(scene(), [(60, 50)])
    assert len(one.masks) == 1 and len(one.boxes) == 1
    b = one.boxes[0]
    assert (b.x, b.y, b.x2, b.y2) == (35, 25, 86, 76)
    two = region_from_pointing(scene(), [(30, 20), (90, 80)])
    assert two.masks == () and [(b.x, b.y, b.w, b.h) for b in two.boxes] == [(30, 20, 60, 60)]
    assert "box 30,20,60,60" in describe_region(two)


def test_a_typed_box_wins_over_the_click_box_and_is_validated() -> None:
    r = region_from_pointing(scene(), [(60, 50)], "10,10,20,20")
    assert [(b.x, b.y, b.w, b.h) for b in r.boxes] == [(10, 10, 20, 20)] and len(r.masks) == 1
    with pytest.raises(InputError, match="outside the 140x100 image"):
        region_from_pointing(scene(), [], "130,90,50,50")


def test_bad_clicks_are_clear_messages() -> None:
    with pytest.raises(InputError, match="outside the 140x100 image"):
        region_from_pointing(scene(), [(500, 5)])


def test_a_click_whose_own_region_cannot_be_the_object_stands_alone() -> None:
    # The grey background is most of the image: that flood fill says nothing about an object's extent, so it is not
    # offered as the region (a leak over a textured photo looks the same); the click itself is kept for the tools.
    background = region_from_pointing(scene(), [(2, 2)])
    assert background.masks == () and background.boxes == () and background.points == (Point(2, 2),)
    assert describe_region(background) == "click at 2,2"
    img = scene()
    img[70, 10] = (250, 250, 250)  # one highlight pixel: a 1-px flood fill, far below the checks' size rule
    speck = region_from_pointing(img, [(10, 70)])
    assert speck.masks == () and speck.boxes == ()


def test_a_brush_layer_becomes_a_mask_and_its_box() -> None:
    layer = np.zeros((100, 140, 4), np.uint8)  # an editor's brush layer: strokes opaque on a transparent canvas
    layer[30:70, 40:80] = (255, 0, 140, 255)
    layer[30:70, 80] = (255, 0, 140, 60)  # a faint anti-aliased edge is not painted
    mask = brush_mask(layer, 140, 100)
    assert mask.data.dtype == bool and mask.data.shape == (100, 140) and mask.area == 40 * 40
    region = region_from_pointing(scene(), brush=mask)
    assert region.masks == (mask,) and [(b.x, b.y, b.w, b.h) for b in region.boxes] == [(40, 30, 40, 40)]
    assert describe_region(region) == "box 40,30,40,40; brush mask of 1,600 px"
    white = np.zeros((100, 140, 3), np.uint8)  # a mask image without transparency: white is the region
    white[30:70, 40:80] = 255
    assert np.array_equal(brush_mask(white, 140, 100).data, mask.data)
    assert brush_mask([layer, white[..., 0] // 2], 140, 100).area == mask.area  # grey 127 is not white enough


def test_bad_brush_layers_are_clear_messages() -> None:
    with pytest.raises(InputError, match="brush mask is empty"):
        brush_mask(np.zeros((100, 140, 4), np.uint8), 140, 100)
    with pytest.raises(InputError, match="no brush strokes"):
        brush_mask([], 140, 100)
    painted = np.full((50, 70, 4), 255, np.uint8)
    with pytest.raises(InputError, match=r"brush mask is 70x50 but the current image is 140x100 \(the image changed"):
        brush_mask(painted, 140, 100)
    with pytest.raises(InputError, match="brush layer must be"):
        brush_mask(np.zeros((100, 140, 2), np.uint8), 140, 100)
    old = brush_mask(painted, 70, 50)  # a mask made for an earlier image of another size
    with pytest.raises(InputError, match="brush mask is 70x50 but the current image is 140x100"):
        region_from_pointing(scene(), brush=old)
