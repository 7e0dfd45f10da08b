"""Background blur (portrait mode): the subject stays bit for bit, the background loses its detail without the
subject's colours smeared into a halo, and the check fails a blur that did nothing or kept a box instead of the subject.
On a real photo: scikit-image's espresso cut-out pasted on scikit-image's cat (both dev-part photos)."""

from __future__ import annotations

import numpy as np
import pytest

from costa.checks.background import check_background_blur, detail
from costa.real.cases import composite
from costa.real.photos import load_photo
from costa.tables import load_tables
from costa.tools import tool_class
from costa.types import Box, EditState, Mask, Subtask, ToolOutput

SUB = Subtask(id="s1", kind="background_blur")


def run(state: EditState, **params: object) -> ToolOutput:
    spec = load_tables().tools["mask_background_blur"]
    return tool_class(spec)(spec)(state, SUB, {**spec.params_for_attempt(0), **params})


def verdict(before: np.ndarray, out: ToolOutput) -> float:
    after = EditState(before).with_output(out)
    return check_background_blur(None, SUB, EditState(before), after, out).quality  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def cup_on_cat() -> tuple[np.ndarray, np.ndarray]:
    return composite(load_photo("sk_chelsea"), "espresso", (0.5, 0.95, 0.55))


def test_the_subject_stays_and_the_background_softens_on_a_real_photo(cup_on_cat) -> None:
    image, mask = cup_on_cat
    out = run(EditState(image, {"masks": (Mask(mask),)}))
    assert out.image is not None and np.array_equal(out.image[mask], image[mask])  # the cup, bit for bit
    assert np.array_equal(out.edited_region, ~mask)
    far = ~mask
    assert detail(out.image, far) < 0.4 * detail(image, far)  # the cat's fur lost its fine detail
    assert verdict(image, out) >= 0.8


def test_no_halo_of_the_subjects_colour() -> None:
    yy, xx = np.mgrid[:200, :200]
    image = np.where(((yy // 2 + xx // 2) % 2 == 0)[..., None], 100, 20).astype(np.uint8).repeat(3, axis=2)
    disc = (yy - 100) ** 2 + (xx - 100) ** 2 < 40**2
    image[disc] = (255, 255, 255)
    out = run(EditState(image, {"masks": (Mask(disc),)}), feather=0)
    ring = ((yy - 100) ** 2 + (xx - 100) ** 2 < 46**2) & ~disc
    assert out.image is not None and abs(float(out.image[ring].mean()) - 60.0) < 8  # background's mean, no white


def test_the_check_fails_a_blur_that_did_nothing_or_kept_a_box(cup_on_cat) -> None:
    image, mask = cup_on_cat
    nothing = ToolOutput(image=image.copy(), edited_region=~mask)
    assert verdict(image, nothing) < 0.5
    ys, xs = np.nonzero(mask)
    box = Box(int(xs.min()) - 30, int(ys.min()) - 30, int(np.ptp(xs)) + 60, int(np.ptp(ys)) + 60)
    boxed = run(EditState(image, {"masks": (Mask(box.to_mask(*mask.shape)),)}))
    assert verdict(image, boxed) < 0.5  # the kept 'subject' does not follow the cup's edges
    speck = np.zeros_like(mask)
    speck[10:12, 10:12] = True
    assert verdict(image, run(EditState(image, {"masks": (Mask(speck),)}))) == 0.0


def test_the_cli_blurs_the_background_of_a_real_photo(cup_on_cat, tmp_path) -> None:
    import subprocess
    import sys
    from pathlib import Path

    from PIL import Image

    image, mask = cup_on_cat
    Image.fromarray(image).save(tmp_path / "in.png")
    ys, xs = np.nonzero(mask)
    box = f"{xs.min() - 4},{ys.min() - 4},{np.ptp(xs) + 8},{np.ptp(ys) + 8}"
    env = {**__import__("os").environ, "COSTA_HOME": str(tmp_path / "home")}
    cmd = [sys.executable, "-m", "costa", "edit", str(tmp_path / "in.png"), "blur the background", "--box", box,
           "-o", str(tmp_path / "out.png"), "--accept-unverified"]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=Path(__file__).parents[1], timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "background_blur" in done.stdout
    out = np.asarray(Image.open(tmp_path / "out.png").convert("RGB"))
    changed = np.abs(out.astype(int) - image.astype(int)).max(axis=2) > 10
    assert changed[mask].mean() < 0.1  # the cup kept …
    assert detail(out, ~mask) < 0.5 * detail(image, ~mask)  # … the cat softened
