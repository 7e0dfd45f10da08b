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
from costa.synthetic.cases_image import make_image_cases
from costa.synthetic.lettering import load_font
from costa.synthetic.scenes import NEW_WORDS, OBJECT_COLOURS, TextScene, scene_seeds, text_scenes
from costa.synthetic.tones import tone
from costa.synthetic.two_objects import recolour_lab, two_object_scene
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
