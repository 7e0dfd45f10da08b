"""The grounded region is judged against the target phrase before the edit: colour, side, size, shape, coverage."""

from __future__ import annotations

import numpy as np

from costa.checks.region import changed_elsewhere
from costa.checks.target import partial_object, target_consistency
from costa.synthetic.cases_checks import _partial
from costa.synthetic.two_objects import recolour_lab, two_object_scene

THRESHOLD = 0.8


def test_the_object_on_the_named_side_passes_and_the_other_one_fails() -> None:
    scene = two_object_scene(11, "flat")
    left, right = scene.masks
    phrase = f"the {scene.colour_name} object on the left"
    assert target_consistency(scene.image, left, phrase).quality >= THRESHOLD
    wrong = target_consistency(scene.image, right, phrase)
    assert wrong.quality < THRESHOLD and any("further left" in r or "not on the left" in r for r in wrong.reasons)
    assert target_consistency(scene.image, right, f"the {scene.colour_name} object on the right").quality == 1.0


def test_a_region_of_another_colour_than_named_fails() -> None:
    scene = two_object_scene(12, "flat")
    other = "blue" if scene.colour_name != "blue" else "red"
    verdict = target_consistency(scene.image, scene.masks[0], f"the {other} object")
    assert verdict.quality < THRESHOLD and any(f"not {other}" in r for r in verdict.reasons)


def test_size_and_shape_words_are_verified() -> None:
    image = np.full((120, 200, 3), 230, np.uint8)
    yy, xx = np.mgrid[0:120, 0:200]
    big = (xx - 50) ** 2 + (yy - 60) ** 2 <= 30**2
    small = (xx - 150) ** 2 + (yy - 60) ** 2 <= 15**2
    image[big | small] = (200, 30, 30)
    assert target_consistency(image, big, "the biggest red circle").quality == 1.0
    assert target_consistency(image, small, "the biggest red circle").quality < THRESHOLD
    assert target_consistency(image, big, "the red stripe").quality < THRESHOLD  # a disc is not a stripe


def test_part_of_an_object_fails_asking_for_better_pointing_and_the_whole_passes() -> None:
    scene = two_object_scene(13, "noise")
    whole = scene.masks[0]
    assert partial_object(scene.image, whole).quality == 1.0
    part = _partial(whole, np.random.default_rng(0))
    verdict = partial_object(scene.image, part)
    assert verdict.quality < THRESHOLD and any("point better" in r for r in verdict.reasons)


def test_recolouring_a_second_object_is_a_change_elsewhere() -> None:
    scene = two_object_scene(14, "texture")
    target, other = scene.masks
    after = recolour_lab(scene.image, target | other, (40, 80, 200))
    assert changed_elsewhere(scene.image, after, target).quality == 0.0
    assert changed_elsewhere(scene.image, recolour_lab(scene.image, target, (40, 80, 200)), target).quality == 1.0
