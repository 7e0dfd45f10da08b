"""Seeded step results, right and wrong, for measuring how often the checks pass a wrong edit or fail a right one.

Each `CheckCase` is one tool step as the search would hand it to `costa.checks.check_step`: the subtask, the edit
state the tool started from (with the artifacts it consumed, e.g. the grounded mask), the tool's output (image,
artifacts, declared edited region) and what the tool declares it produces. The case is built from a synthetic scene
whose truth is known, so whether the result is right is known by construction (`correct`), not judged by a check.

Wrong results, by `category` (the failures people saw in the app; issue 8):
  - "wrong object": the other of two same-coloured objects was edited (its mask was the one consumed);
  - "second same-coloured object": the target and the other same-coloured object were both recoloured;
  - "partial coverage": only part of the object was grounded and edited (a 30–50 % patch);
  - "tiny mask" / "empty mask": a click-sized (≤ 13 px) or empty region was edited, or produced as the mask;
  - "whole-image change": the edit was right inside the object but the whole image changed, no region declared;
  - "smear": a removal filled a textured background with a smooth smear;
  - "near-miss text": a replacement wrote text one character off ('555-0123' for '555-0128', 'CLOSE' for 'CLOSED');
  - "text already present": an addition of a word the image already showed, the tool only drew a frame;
  - "mirrored margins": outpainting mirrored text or an object cut by the border into the new margin;
  - "clipping": a global adjustment that clipped a large share of the image to black or white.
Right results ("correct"): the true edit from the scene's truth (the true background for removal, a shading-keeping
LAB recolour inside the true mask, the true mask, the asked text drawn in the scene's own font and colour, the scene
that was really around an outpainting crop, a tone curve without clipping).

Example:
    >>> cs = make_check_cases(seed=0, scale=0.05)
    >>> sorted({c.correct for c in cs}), all(c.before.image.dtype.name == "uint8" for c in cs)
    ([False, True], True)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from costa.colours import parse_colour
from costa.masks import dilate_mask
from costa.synthetic.backgrounds import random_background
from costa.synthetic.cases_image import make_image_cases
from costa.synthetic.lettering import load_font
from costa.synthetic.scenes import NEW_WORDS, OBJECT_COLOURS, TextScene, scene_seeds, text_scenes
from costa.types import Box, EditState, Mask, Subtask, ToolOutput

#: Tool whose declared outputs a case's step uses, per subtask kind (what `check_step` is told was produced).
STEP_TOOLS: dict[str, str] = {
    "object_recoloration": "recolor_lab",
    "object_removal": "remove_patchmatch",
    "object_segmentation": "grabcut_segment",
    "text_replacement": "text_replace_pillow",
    "text_addition": "text_add_pillow",
    "outpainting": "reflect_outpaint",
    "global_adjustment": "global_adjust",
}

CORRECT = "correct"

#: (subtask kind, category, cases at scale 1.0): 240 wrong and 200 right results.
PLAN: tuple[tuple[str, str, int], ...] = (
    ("object_recoloration", CORRECT, 30),
    ("object_recoloration", "wrong object", 15),
    ("object_recoloration", "second same-coloured object", 15),
    ("object_recoloration", "partial coverage", 15),
    ("object_recoloration", "tiny mask", 10),
    ("object_recoloration", "empty mask", 5),
    ("object_recoloration", "whole-image change", 10),
    ("object_removal", CORRECT, 30),
    ("object_removal", "wrong object", 15),
    ("object_removal", "partial coverage", 10),
    ("object_removal", "tiny mask", 10),
    ("object_removal", "smear", 15),
    ("object_removal", "whole-image change", 10),
    ("object_segmentation", CORRECT, 30),
    ("object_segmentation", "wrong object", 10),
    ("object_segmentation", "partial coverage", 10),
    ("object_segmentation", "tiny mask", 5),
    ("object_segmentation", "empty mask", 5),
    ("text_replacement", CORRECT, 20),
    ("text_replacement", "near-miss text", 20),
    ("text_addition", CORRECT, 20),
    ("text_addition", "text already present", 20),
    ("outpainting", CORRECT, 30),
    ("outpainting", "mirrored margins", 20),
    ("global_adjustment", CORRECT, 40),
    ("global_adjustment", "clipping", 20),
)

#: (what was asked, what a near-miss tool wrote): one character off, in the classes that must match exactly.
NEAR_MISSES: tuple[tuple[str, str], ...] = (
    ("CLOSED", "CLOSE"),
    ("555-0128", "555-0123"),
    ("$19.99", "$19.90"),
    ("OPEN", "OPEX"),
    ("SALE", "SAFE"),
    ("2024", "2023"),
    ("EXIT", "EDIT"),
    ("10:30", "10:39"),
    ("MENU", "MENUS"),
    ("CAFE", "CAKE"),
)
#: Adjustments with a right (tone curve, no clipping) and a clipping implementation.
ADJUST_REQUESTS: tuple[str, ...] = ("brighter", "more contrast", "darker", "slightly brighter")
#: Backgrounds on which a smooth fill is a visible smear (flat and gradient ones are smooth themselves).
TEXTURED = ("noise", "texture", "photo")


@dataclass(frozen=True, eq=False)
class CheckCase:
    """One step result to check, and whether it is right by construction.

    Attributes:
        name: unique id, "<kind>/<category>/<index>".
        kind: the subtask kind (which check judges it).
        category: "correct" or the kind of mistake (see the module docstring).
        correct: True when the result does what was asked.
        subtask: the subtask as the planner would make it.
        produced: the artifact types the tool declares (what `check_step` gets as `produced`).
        before: the state the tool started from, with the artifacts it consumed.
        output: what the tool returned.
        note: how the case was made, for reports.
    """

    name: str
    kind: str
    category: str
    correct: bool
    subtask: Subtask
    produced: tuple[str, ...]
    before: EditState
    output: ToolOutput
    note: str = ""

    @property
    def after(self) -> EditState:
        return self.before.with_output(self.output)


# --------------------------------------------------------------------------------------------------- two objects


@dataclass(frozen=True, eq=False)
class TwoObjectScene:
    """Two shaded objects of one colour, left and right; `target` (0 left, 1 right) is the one the subtask names."""

    image: np.ndarray
    background: np.ndarray
    masks: tuple[np.ndarray, np.ndarray]
    colour_name: str
    background_kind: str
    target: int

    @property
    def phrase(self) -> str:
        side = ("left", "right")[self.target]
        return f"the {self.colour_name} object on the {side}"

    @property
    def target_mask(self) -> np.ndarray:
        return self.masks[self.target]

    @property
    def other_mask(self) -> np.ndarray:
        return self.masks[1 - self.target]


def two_object_scene(seed: int, background: str | None = None) -> TwoObjectScene:
    """Paint two same-coloured shaded ellipses, one in each half of a random background (240–320 × 320–448 px)."""
    rng = np.random.default_rng(seed)
    height, width = int(rng.integers(30, 41)) * 8, int(rng.integers(40, 57)) * 8
    kinds = ("flat", "gradient", "noise", "texture")
    bg_kind = background or kinds[int(rng.integers(len(kinds)))]
    bg = random_background(bg_kind, height, width, rng, light=bool(rng.random() < 0.5))
    name, rgb = OBJECT_COLOURS[int(rng.integers(len(OBJECT_COLOURS)))]
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    image = bg.copy()
    masks = []
    for half in (0, 1):
        rx = float(rng.uniform(0.09, 0.17)) * width
        ry = float(rng.uniform(0.14, 0.3)) * height
        cx = (0.25 + 0.5 * half) * width + float(rng.uniform(-0.04, 0.04)) * width
        cy = float(rng.uniform(0.4, 0.6)) * height
        mask = ((xx - cx) / rx) ** 2 + ((yy - cy) / ry) ** 2 <= 1.0
        u = ((xx - cx) / rx + (yy - cy) / ry) / 2.0
        shade = np.clip(0.85 - 0.3 * u, 0.55, 1.15)[..., None]
        grain = rng.normal(0.0, 2.0, (height, width, 3)).astype(np.float32)
        obj = np.clip(np.asarray(rgb, np.float32) * shade + grain, 0, 255)
        image[mask] = np.rint(obj[mask]).astype(np.uint8)
        masks.append(mask)
    return TwoObjectScene(image, bg, (masks[0], masks[1]), name, bg_kind, int(rng.integers(2)))


def recolour_lab(image: np.ndarray, mask: np.ndarray, rgb: tuple[int, int, int]) -> np.ndarray:
    """Recolour `mask` to `rgb` keeping shading: CIELAB a*, b* set to the target's, L* shifted to the target's mean."""
    import cv2

    lab = cv2.cvtColor(image.astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)
    target = cv2.cvtColor(np.array([[rgb]], np.float32) / 255.0, cv2.COLOR_RGB2Lab)[0, 0]
    out = lab.copy()
    if mask.any():
        light = lab[..., 0][mask]
        out[..., 0][mask] = np.clip(light - light.mean() + target[0], 0, 100)
        out[..., 1][mask] = target[1]
        out[..., 2][mask] = target[2]
    rgb_out = cv2.cvtColor(out, cv2.COLOR_Lab2RGB)
    result = np.clip(np.rint(rgb_out * 255.0), 0, 255).astype(np.uint8)
    keep = image.copy()
    keep[mask] = result[mask]
    return keep


def _partial(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A 30–50 % patch of `mask`: the part on one side of a random line through it."""
    ys, xs = np.nonzero(mask)
    angle = float(rng.uniform(0, 2 * math.pi))
    proj = xs * math.cos(angle) + ys * math.sin(angle)
    cut = np.quantile(proj, float(rng.uniform(0.3, 0.5)))
    out = np.zeros_like(mask)
    keep = proj <= cut
    out[ys[keep], xs[keep]] = True
    return out


def _tiny(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A click-sized region inside `mask`: a disk of radius 0–2 px (1–13 pixels) at a random object pixel."""
    ys, xs = np.nonzero(mask)
    i = int(rng.integers(len(ys)))
    out = np.zeros_like(mask)
    out[ys[i], xs[i]] = True
    return dilate_mask(out, float(rng.integers(0, 3))) & mask


def _colour_other_than(name: str, rng: np.random.Generator) -> tuple[str, tuple[int, int, int]]:
    names = [n for n, _ in OBJECT_COLOURS if n != name]
    pick = names[int(rng.integers(len(names)))]
    rgb = parse_colour(pick)
    assert rgb is not None  # the object colours are table colours
    return pick, rgb


def _masks_state(image: np.ndarray, mask: np.ndarray) -> EditState:
    return EditState(image, {"masks": (Mask(mask.astype(bool), label="object"),)})


def _recolour_case(category: str, seed: int, produced: tuple[str, ...]) -> tuple[CheckCase, str]:
    rng = np.random.default_rng(seed)
    scene = two_object_scene(seed)
    result, rgb = _colour_other_than(scene.colour_name, rng)
    subtask = Subtask(id="s1", kind="object_recoloration", target=scene.phrase, result=result)
    target, other = scene.target_mask, scene.other_mask
    consumed, edited, region = target, target, target
    if category == "wrong object":
        consumed = edited = region = other
    elif category == "second same-coloured object":
        edited = region = target | other
    elif category == "partial coverage":
        consumed = edited = region = _partial(target, rng)
    elif category == "tiny mask":
        consumed = edited = region = _tiny(target, rng)
    elif category == "empty mask":
        consumed = edited = region = np.zeros_like(target)
    image = recolour_lab(scene.image, edited, rgb)
    declared: np.ndarray | None = region
    if category == "whole-image change":
        image = recolour_lab(scene.image, np.ones_like(target), rgb)
        declared = None
    before = _masks_state(scene.image, consumed)
    out = ToolOutput(image=image, edited_region=declared)
    return CheckCase("", "object_recoloration", category, category == CORRECT, subtask, produced, before, out), (
        f"{scene.background_kind} background, {scene.colour_name} → {result}"
    )


def _removal_case(category: str, seed: int, produced: tuple[str, ...]) -> tuple[CheckCase, str]:
    import cv2

    rng = np.random.default_rng(seed)
    scene = two_object_scene(seed, TEXTURED[int(rng.integers(2))] if category == "smear" else None)
    subtask = Subtask(id="s1", kind="object_removal", target=scene.phrase)
    target, other = scene.target_mask, scene.other_mask
    consumed = target
    if category == "wrong object":
        consumed = other
    elif category == "partial coverage":
        consumed = _partial(target, rng)
    elif category == "tiny mask":
        consumed = _tiny(target, rng)
    hole = dilate_mask(consumed, 2) if consumed.any() else consumed
    image = scene.image.copy()
    image[hole] = scene.background[hole]
    declared: np.ndarray | None = hole
    if category == "smear":
        filled = cv2.inpaint(scene.image, hole.astype(np.uint8) * 255, 5, cv2.INPAINT_TELEA)
        smooth = cv2.GaussianBlur(filled, (0, 0), 6.0)
        image = scene.image.copy()
        image[hole] = smooth[hole]
    elif category == "whole-image change":
        shift = np.array([int(v) for v in rng.integers(-30, 31, 3)], np.int16)
        image = np.clip(image.astype(np.int16) + shift, 0, 255).astype(np.uint8)
        image = cv2.GaussianBlur(image, (0, 0), 1.5)
        declared = None
    before = _masks_state(scene.image, consumed)
    out = ToolOutput(image=image, edited_region=declared)
    return CheckCase("", "object_removal", category, category == CORRECT, subtask, produced, before, out), (
        f"{scene.background_kind} background"
    )


def _segmentation_case(category: str, seed: int, produced: tuple[str, ...]) -> tuple[CheckCase, str]:
    rng = np.random.default_rng(seed)
    scene = two_object_scene(seed)
    subtask = Subtask(id="s1", kind="object_segmentation", target=scene.phrase)
    target = scene.target_mask
    mask = target
    if category == "wrong object":
        mask = scene.other_mask
    elif category == "partial coverage":
        mask = _partial(target, rng)
    elif category == "tiny mask":
        mask = _tiny(target, rng)
    elif category == "empty mask":
        mask = np.zeros_like(target)
    before = EditState(scene.image)
    out = ToolOutput(artifacts={"masks": (Mask(mask.astype(bool), label="object"),)})
    return CheckCase("", "object_segmentation", category, category == CORRECT, subtask, produced, before, out), (
        f"{scene.background_kind} background"
    )


# --------------------------------------------------------------------------------------------------------- text


def draw_text(image: np.ndarray, scene: TextScene, text: str, x: int, y: int, height: int, max_width: int) -> Box:
    """Draw `text` in the scene's font and colour with its ink top-left at (x, y), `height` px tall at most (shrunk
    to fit `max_width`); return the ink box. Anti-aliased, blended into `image` in place."""
    from PIL import Image, ImageDraw

    size = max(12, round(height * 1.25))
    while True:
        font = load_font(scene.font, size)
        left, top, right, bottom = font.getbbox(text)
        if (right - left <= max_width and bottom - top <= height) or size <= 12:
            break
        size = max(12, int(size * 0.92))
    h, w = image.shape[:2]
    layer = Image.new("L", (w, h), 0)
    ImageDraw.Draw(layer).text((x - left, y - top), text, font=font, fill=255)
    alpha = np.asarray(layer, np.float32)[..., None] / 255.0
    ink = np.asarray(scene.colour, np.float32)
    image[:] = np.clip(np.rint(image * (1 - alpha) + ink * alpha), 0, 255).astype(np.uint8)
    return Box(x, y, max(1, right - left), max(1, bottom - top)).clip(w, h)


def _free_band(scene: TextScene, height: int) -> int | None:
    """Top y of a horizontal band `height` px tall (plus a margin) with no ink, away from the borders; None if none."""
    ink_rows = np.asarray(scene.ink.any(axis=1))  # numpy's stubs type `any(axis=...)` as bool | array
    h = ink_rows.shape[0]
    margin = max(6, height // 3)
    for y in list(range(h - height - 2 * margin, 0, -4)):
        if y < margin:
            break
        if not ink_rows[y - margin : y + height + margin].any():
            return y
    return None


def _text_scene(seed: int) -> TextScene:
    return text_scenes(1, seed, kind="sign", stream="checks-text")[0]


def _replacement_case(category: str, seed: int, produced: tuple[str, ...]) -> tuple[CheckCase, str]:
    rng = np.random.default_rng(seed)
    scene = _text_scene(seed)
    asked, wrong = NEAR_MISSES[int(rng.integers(len(NEAR_MISSES)))]
    written = asked if category == CORRECT else wrong
    word = scene.target
    b = word.box
    height, width = scene.image.shape[:2]
    pad = 2
    clear = Box(b.x - pad, b.y - pad, b.w + 2 * pad, b.h + 2 * pad).clip(width, height)
    image = scene.image.copy()
    image[clear.y : clear.y2, clear.x : clear.x2] = scene.background[clear.y : clear.y2, clear.x : clear.x2]
    ink_h = max(10, b.h)
    drawn = draw_text(image, scene, written, b.x, b.y, ink_h, max(b.w, width - b.x - 4))
    region = np.zeros((height, width), bool)
    for box in (clear, drawn):
        region[box.y : box.y2, box.x : box.x2] = True
    region = dilate_mask(region, 2)
    subtask = Subtask(id="s1", kind="text_replacement", target=word.text, result=asked)
    before = EditState(scene.image, {"text_regions": scene.regions()})
    out = ToolOutput(image=image, edited_region=region)
    return CheckCase("", "text_replacement", category, category == CORRECT, subtask, produced, before, out), (
        f"{word.text!r} → wrote {written!r} for {asked!r}"
    )


def _addition_case(category: str, seed: int, produced: tuple[str, ...]) -> tuple[CheckCase, str] | None:
    import cv2

    rng = np.random.default_rng(seed)
    scene = _text_scene(seed)
    height, width = scene.image.shape[:2]
    image = scene.image.copy()
    region = np.zeros((height, width), bool)
    if category == CORRECT:
        present = {w.text for w in scene.words}
        words = [w for w in NEW_WORDS if w not in present]
        word = words[int(rng.integers(len(words)))]
        ink_h = max(14, min(48, scene.size * 3 // 4))
        y = _free_band(scene, ink_h)
        if y is None:
            return None
        x = int(rng.integers(max(1, width // 10), max(2, width // 3)))
        box = draw_text(image, scene, word, x, y, ink_h, width - x - 8)
        region[box.y : box.y2, box.x : box.x2] = True
        note = f"drew {word!r} in a free band"
    else:  # the asked word is already on the sign; the tool drew a frame around it and nothing else
        word = scene.target.text
        b = scene.target.box
        p = max(3, b.h // 5)
        x1, y1, x2, y2 = max(0, b.x - p), max(0, b.y - p), min(width - 1, b.x2 + p), min(height - 1, b.y2 + p)
        cv2.rectangle(image, (x1, y1), (x2, y2), tuple(int(c) for c in scene.colour), 2)
        region[max(0, y1 - 2) : y2 + 3, max(0, x1 - 2) : x2 + 3] = True
        note = f"{word!r} already on the sign; only a frame drawn"
    subtask = Subtask(id="s1", kind="text_addition", result=word)
    out = ToolOutput(image=image, edited_region=dilate_mask(region, 2))
    before = EditState(scene.image)
    return CheckCase("", "text_addition", category, category == CORRECT, subtask, produced, before, out), note


# --------------------------------------------------------------------------------------------------- whole image


def _outpaint_cases(category: str, n: int, seed: int, produced: tuple[str, ...]) -> Iterator[tuple[CheckCase, str]]:
    if category == CORRECT:
        for case in make_image_cases("outpainting", n, seed):
            assert case.truth is not None
            out = ToolOutput(image=case.truth)
            yield (
                CheckCase("", "outpainting", CORRECT, True, case.subtask, produced, EditState(case.image), out),
                (f"the true scene around a {case.note} crop"),
            )
        return
    from costa.tools.outpaint import outpaint_margins

    for i, s in enumerate(scene_seeds(n, seed, "checks-mirror")):
        rng = np.random.default_rng(s)
        scene = _text_scene(s)
        line = max(scene.lines, key=lambda ln: ln.box.w)
        b = line.box
        side = ("left", "right")[i % 2]
        cut = int(b.x + b.w * float(rng.uniform(0.3, 0.5))) if side == "left" else int(b.x2 - b.w * 0.4)
        source = scene.image[:, cut:] if side == "left" else scene.image[:, :cut]
        source = np.ascontiguousarray(source)
        request = ("50%", {"direction": side})
        m = outpaint_margins(source.shape[0], source.shape[1], request[0], request[1])
        image = np.pad(source, ((m.top, m.bottom), (m.left, m.right), (0, 0)), mode="symmetric")
        subtask = Subtask(id="s1", kind="outpainting", result=request[0], params=dict(request[1]))
        before = EditState(source)
        out = ToolOutput(image=image)
        yield (
            CheckCase("", "outpainting", category, False, subtask, produced, before, out),
            (f"{side} margin mirrors {line.text!r} cut at x={cut}"),
        )


#: What a right adjustment achieves: mean luma change (0–1 scale) for brightness, spread factor for contrast.
_BRIGHTNESS_STEP = {"brighter": 0.08, "slightly brighter": 0.045, "darker": -0.08}
_CONTRAST_FACTOR = 1.3


def _luma01(x: np.ndarray) -> np.ndarray:
    return x[..., 0] * 0.299 + x[..., 1] * 0.587 + x[..., 2] * 0.114


def _to_uint8(x: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(x * 255.0), 0, 255).astype(np.uint8)


def _lightness_spread(image: np.ndarray) -> float:
    """Standard deviation of CIELAB L* over the image (what "contrast" means to a viewer and to the check)."""
    from costa.imagestats import lab_stats

    return lab_stats(image).contrast


def _solve(apply: Callable[[float], np.ndarray], measure: Callable[[np.ndarray], float], goal: float) -> np.ndarray:
    """Bisect a curve's strength in [0, 1] until `measure` of the result reaches `goal` (monotone in strength)."""
    lo, hi = 0.0, 1.0
    for _ in range(20):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if measure(apply(mid)) < goal else (lo, mid)
    return apply(hi)


def tone(image: np.ndarray, request: str, clip: bool) -> np.ndarray:
    """`request` as a right adjustment (`clip` False): a smooth curve strong enough to be seen (mean luma moved by
    `_BRIGHTNESS_STEP`, or the luma spread × `_CONTRAST_FACTOR`) that never clips; or (`clip` True) a linear gain that
    clips a large share of the image to black or white."""
    x = image.astype(np.float32) / 255.0
    if clip:  # linear gains set from the image's own levels, so 20–40 % of its values are clipped whatever it is
        p20, p40, p60, p80 = (float(v) for v in np.quantile(x, (0.2, 0.4, 0.6, 0.8)))
        if request == "more contrast":
            y = np.clip((x - p20) / max(p80 - p20, 1e-3), 0, 1)
        elif request in ("brighter", "slightly brighter"):
            y = np.clip(x / max(p60, 1e-3), 0, 1)
        elif request == "darker":
            y = np.clip((x - p40) / max(1.0 - p40, 1e-3), 0, 1)
        else:
            raise ValueError(f"no tone curve for {request!r}")
    elif request in _BRIGHTNESS_STEP:
        step = _BRIGHTNESS_STEP[request]
        base = float(_luma01(x).mean())

        def gamma(t: float) -> np.ndarray:
            return x ** (1.0 - 0.75 * t) if step > 0 else x ** (1.0 + 3.0 * t)

        y = _solve(gamma, lambda im: abs(float(_luma01(im).mean()) - base), abs(step))
    elif request == "more contrast":  # stretch L* about its mean, a* b* kept; a soft knee keeps the ends in range
        import cv2

        lab0 = cv2.cvtColor(x, cv2.COLOR_RGB2Lab)
        m = float(lab0[..., 0].mean())
        spread = _lightness_spread(image)
        for factor in (_CONTRAST_FACTOR, 1.6, 2.0, 2.6):  # saturated colours leave the gamut: stretch until it shows
            lab = lab0.copy()
            d = (lab0[..., 0] - m) * factor
            lab[..., 0] = np.where(d >= 0, m + (100.0 - m) * np.tanh(d / (100.0 - m)), m - m * np.tanh(-d / m))
            y = np.clip(cv2.cvtColor(lab, cv2.COLOR_Lab2RGB), 0, 1)
            if _lightness_spread(_to_uint8(y)) >= 1.2 * spread:
                break
    else:
        raise ValueError(f"no tone curve for {request!r}")
    if not clip:  # a channel that was not at 0 or 255 is not pushed there (that is what clipping means)
        ends = (image == 0) | (image == 255)
        y = np.where(ends, y, np.clip(y, 1.0 / 255.0, 254.0 / 255.0))
    return np.clip(np.rint(y * 255.0), 0, 255).astype(np.uint8)


def _adjust_case(category: str, seed: int, produced: tuple[str, ...]) -> tuple[CheckCase, str]:
    rng = np.random.default_rng(seed)
    source = (_text_scene(seed).image if seed % 2 else two_object_scene(seed).image).copy()
    request = ADJUST_REQUESTS[int(rng.integers(len(ADJUST_REQUESTS)))]
    image = tone(source, request, clip=category != CORRECT)
    subtask = Subtask(id="s1", kind="global_adjustment", result=request)
    out = ToolOutput(image=image)
    how = " as a smooth curve" if category == CORRECT else " as a clipping gain"
    case = CheckCase("", "global_adjustment", category, category == CORRECT, subtask, produced, EditState(source), out)
    return case, f"{request!r}{how}"


# -------------------------------------------------------------------------------------------------------- cases

_Builder = Callable[[str, int, tuple[str, ...]], "tuple[CheckCase, str] | None"]
_BUILDERS: dict[str, _Builder] = {
    "object_recoloration": _recolour_case,
    "object_removal": _removal_case,
    "object_segmentation": _segmentation_case,
    "text_replacement": _replacement_case,
    "text_addition": _addition_case,
    "global_adjustment": _adjust_case,
}


def make_check_cases(
    seed: int = 0,
    scale: float = 1.0,
    produced: dict[str, tuple[str, ...]] | None = None,
    kinds: frozenset[str] | None = None,
) -> list[CheckCase]:
    """Build the false-pass / false-fail cases of `PLAN`, `scale` × as many of each (at least one), from `seed`.

    Args:
        produced: subtask kind → the artifact types its step declares (default: the `STEP_TOOLS` tools' outputs in
            tool_tables/tools.yaml).
        kinds: build only these subtask kinds (default all).
    """
    if produced is None:
        from costa.tables import load_tables

        tools = load_tables().tools
        produced = {k: tuple(tools[t].outputs) for k, t in STEP_TOOLS.items()}
    cases: list[CheckCase] = []
    for kind, category, count in PLAN:
        if kinds is not None and kind not in kinds:
            continue
        n = max(1, round(count * scale))
        made: list[tuple[CheckCase, str]] = []
        if kind == "outpainting":
            made = list(_outpaint_cases(category, n, seed, produced[kind]))
        else:
            for s in scene_seeds(4 * n, seed, f"checks-{kind}-{category}"):
                built = _BUILDERS[kind](category, s, produced[kind])
                if built is not None:
                    made.append(built)
                if len(made) == n:
                    break
        for i, (case, note) in enumerate(made):
            cases.append(
                CheckCase(
                    f"{kind}/{category}/{i}",
                    case.kind,
                    case.category,
                    case.correct,
                    case.subtask,
                    case.produced,
                    case.before,
                    case.output,
                    note,
                )
            )
    return cases
