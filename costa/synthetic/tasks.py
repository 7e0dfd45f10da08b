"""Synthetic multi-step tasks with ground truth (their verification is `costa.synthetic.truth`; the runner that plans
and runs them is `bench.tasks`).

A task is an English instruction of 1–8 clauses over one synthetic scene (`costa.synthetic.scenes`): a sign (text edits,
reading), a contact card (redaction) or a shaded object on a background (recolouring or removal, with the object's box
given as the user's box), plus whole-image steps — a global adjustment, deblurring (the scene is then blurred first),
outpainting, upscaling. Each clause carries the outcome it must have, checked against the scene's ground truth after
the subtask that served it, never by the tools' own checks (`costa.synthetic.truth.verify_subtask`):

- text replacement: OCR reads the new word over the old word's place and no longer reads the old word;
- text removal: OCR no longer reads the word; where nothing earlier changed the image, the erased ink is within
  20 dB PSNR of the true background;
- text addition: OCR reads the new word;
- keyword highlighting: OCR still reads the word at its place, and it became yellower there (mean b* up ≥ 4);
- text redaction: OCR no longer reads a phone number / email;
- text extraction / detection: the result names ≥ 80 % of the words the image then shows;
- object recolouring: median ΔE2000 of the object's pixels to the asked colour ≤ 15;
- object removal: the object's pixels are within 20 dB PSNR of the true background (on photos, whose hidden
  content cannot be known, 5 dB closer to it than the object was also passes);
- global adjustment: the asked CIELAB statistic moved the asked way (L* ≥ 1.5, spread or chroma × or ÷ ≥ 1.05,
  b* ≥ 1.5; black and white: chroma ≤ 3; sepia: b* ≥ 5);
- image upscaling: the size is the factor × the size before, and shrunk back it matches (PSNR ≥ 28 dB);
- image deblurring: closer to the sharp scene than the blurred input was (PSNR gain ≥ 0.3 dB);
- outpainting: the canvas has the asked size and the image before sits unchanged at the asked offset.

Coordinates of the ground truth follow the image through outpainting (offset) and upscaling (scale). Reproducible by
seed: the same `seed` and `n` give the same tasks and plans, and the tools are deterministic; a verdict can differ
between runs only where measured seconds make the search pick another tool.

Example:
    >>> t = make_tasks(3, seed=0)
    >>> len(t), all(1 <= len(task.expected) <= 8 for task in t)
    (3, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from costa.synthetic.case import BenchCase
from costa.synthetic.scenes import (
    NEW_WORDS,
    ObjectScene,
    TextScene,
    make_text_scene,
    random_object_scene,
    scene_seeds,
)
from costa.types import Box

#: Largest number of subtasks in one task.
MAX_SUBTASKS = 8
ADJUST_CLAUSES: tuple[tuple[str, str], ...] = (
    ("Make the image brighter.", "brighter"),
    ("Make it slightly darker.", "darker"),
    ("Increase the contrast.", "more contrast"),
    ("Reduce the contrast.", "less contrast"),
    ("Make it more saturated.", "more saturated"),
    ("Make the image less saturated.", "less saturated"),
    ("Make it warmer.", "warmer"),
    ("Make the image cooler.", "cooler"),
    ("Convert it to black and white.", "grayscale"),
    ("Make the image sepia.", "sepia"),
)
_ADJUST_GROUP = {"brighter": "light", "darker": "light", "more contrast": "contrast", "less contrast": "contrast",
                 "warmer": "warmth", "cooler": "warmth"}  # fmt: skip
_OUTPAINT_CLAUSES: tuple[tuple[str, str | None, dict[str, str]], ...] = (
    ("Extend the image to the left.", None, {"direction": "left"}),
    ("Extend the image to the right.", None, {"direction": "right"}),
    ("Extend the canvas on all sides.", None, {"direction": "all sides"}),
    ("Outpaint the image to 16:9.", "16:9", {}),
    ("Extend the image upwards.", None, {"direction": "upwards"}),
)
_RECOLOUR_TARGETS = ("pink", "teal", "orange", "purple", "yellow", "green", "blue", "red", "white", "navy")


@dataclass(frozen=True)
class Expected:
    """One clause's subtask and the ground truth it is verified against.

    `word` is the scene word it acts on (replace, remove, highlight), `new` the word it writes, `colour` the asked
    colour name, `span` the redacted kind ("phone number", "email"); `params` the planner params the tools read.
    """

    kind: str
    clause: str
    word: str | None = None
    new: str | None = None
    colour: str | None = None
    span: str | None = None
    result: str | None = None
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class SyntheticTask:
    """An instruction over one scene with the expected outcome of each clause, in instruction order.

    `image` is the input (the scene, blurred when the task asks to deblur); `sharp` the scene before blurring;
    `box` the object's box as a user would draw it (object tasks), None otherwise.
    """

    index: int
    instruction: str
    image: np.ndarray
    expected: tuple[Expected, ...]
    family: str
    text: TextScene | None = None
    obj: ObjectScene | None = None
    sharp: np.ndarray | None = None
    box: Box | None = None


def pick(rng: np.random.Generator, items: Sequence[Any]) -> Any:
    return items[int(rng.integers(len(items)))]


def text_ops(rng: np.random.Generator, scene: TextScene, budget: int) -> list[Expected]:
    """Up to `budget` text clauses on distinct words of a sign: replace, remove, highlight, add; reading first."""
    words = [w.text for w in scene.words]
    words = [words[i] for i in rng.permutation(len(words))]
    fresh = [NEW_WORDS[i] for i in rng.permutation(len(NEW_WORDS))]
    ops: list[Expected] = []
    if budget > 0 and rng.random() < 0.35:
        kind = pick(rng, ("text_extraction", "text_detection"))
        clause = "Read the text." if kind == "text_extraction" else "Detect the text."
        ops.append(Expected(kind, clause))
    for word in words:
        if len(ops) >= budget:
            break
        choice = pick(rng, ("replace", "replace", "remove", "highlight"))
        if choice == "replace":
            new = fresh.pop()
            verb = pick(rng, ("Replace the text '{w}' with '{n}'.", "Change the word '{w}' to '{n}'."))
            ops.append(Expected("text_replacement", verb.format(w=word, n=new), word=word, new=new))
        elif choice == "remove":
            verb = pick(rng, ("Remove the text '{w}'.", "Erase the word '{w}'."))
            ops.append(Expected("text_removal", verb.format(w=word), word=word))
        else:
            ops.append(Expected("keyword_highlighting", f"Highlight the word '{word}'.", word=word))
    if len(ops) < budget and rng.random() < 0.5:
        new = fresh.pop()
        ops.append(Expected("text_addition", f"Add the text '{new}'.", new=new))
    return ops


def contact_ops(rng: np.random.Generator, budget: int) -> list[Expected]:
    ops = [Expected("text_redaction", "Redact the phone number.", span="phone number")]
    if budget > 1 and rng.random() < 0.5:
        ops.append(Expected("text_redaction", "Redact the email address.", span="email"))
    return ops[:budget]


def object_op(rng: np.random.Generator, scene: ObjectScene) -> Expected:
    if rng.random() < 0.5:
        colour = pick(rng, [c for c in _RECOLOUR_TARGETS if c != scene.colour_name])
        clause = pick(rng, ("Make the object {c}.", "Recolor the object to {c}.")).format(c=colour)
        return Expected("object_recoloration", clause, colour=colour)
    return Expected("object_removal", "Remove the object.")


def make_task(index: int, seed: int) -> SyntheticTask:
    """Task number `index` of the suite drawn from `seed` (see the module docstring)."""
    import cv2

    rng = np.random.default_rng(scene_seeds(1, seed, f"task-{index}")[0])
    scene_seed = int(rng.integers(2**31))
    family = pick(rng, ("sign", "sign", "sign", "contact", "object", "object"))
    size = int(rng.integers(1, MAX_SUBTASKS + 1))
    text = obj = None
    if family == "object":
        obj = random_object_scene(scene_seed)
        image = obj.image
    else:
        text = make_text_scene(scene_seed, kind="sign" if family == "sign" else "contact")
        image = text.image

    # Whole-image steps: deblur (first), outpaint (text tasks only: a user's box would not follow it), one or two
    # adjustments of different quantities, upscale (last).
    wants_deblur = rng.random() < 0.2
    wants_outpaint = family != "object" and not wants_deblur and rng.random() < 0.2
    wants_upscale = rng.random() < 0.3
    n_adjust = int(rng.integers(0, 3))
    fixed = int(wants_deblur) + int(wants_outpaint) + int(wants_upscale)
    budget = max(1, size - fixed - n_adjust)
    if family == "sign":
        assert text is not None
        core = text_ops(rng, text, budget)
    elif family == "contact":
        core = contact_ops(rng, budget)
    else:
        assert obj is not None
        core = [object_op(rng, obj)]
    head: list[Expected] = []
    sharp = None
    if wants_deblur:
        sharp = image
        blurred = cv2.GaussianBlur(image.astype(np.float32), (0, 0), float(rng.uniform(1.2, 2.0)))
        blurred += np.asarray(rng.normal(0.0, 1.0, blurred.shape), dtype=np.float32)
        image = np.clip(np.rint(blurred), 0, 255).astype(np.uint8)
        head.append(Expected("image_deblurring", pick(rng, ("Deblur the image.", "Sharpen the image."))))
    if wants_outpaint:
        clause, result, params = pick(rng, _OUTPAINT_CLAUSES)
        head.append(Expected("outpainting", clause, result=result, params=dict(params)))
    tail: list[Expected] = []
    groups: set[str] = set()  # one adjustment per quantity: "brighter and darker" would be a contradiction
    for _ in range(n_adjust):
        clause, result = pick(rng, ADJUST_CLAUSES)
        group = _ADJUST_GROUP.get(result, "colour")
        if group not in groups:
            groups.add(group)
            tail.append(Expected("global_adjustment", clause, result=result))
    if wants_upscale:
        factor = pick(rng, ("2", "2", "3"))
        tail.append(Expected("image_upscaling", f"Upscale the image {factor}x.", result=factor))
    expected = (*head, *core, *tail)[:MAX_SUBTASKS]
    instruction = " ".join(e.clause for e in expected)
    box = BenchCase(None, obj=obj).user_box() if obj is not None else None  # type: ignore[arg-type]
    return SyntheticTask(index, instruction, image, expected, family, text, obj, sharp, box)


def make_tasks(n: int, seed: int = 0) -> list[SyntheticTask]:
    """`n` tasks drawn from `seed` (each task depends only on its own index and the seed)."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    return [make_task(i, seed) for i in range(n)]
