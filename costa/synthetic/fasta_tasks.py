"""Seeded task streams for FaSTA*: the benchmark's training and evaluation tasks, and the verification samples the
library's induction runs proposals on (`samples`, product code: `costa.subroutines.mining` verifies every proposed
rule on them), with the contexts where a table's first choice fails.

Built from the task generator's scenes (`costa.synthetic.scenes`) at 256 px wide, so a few hundred tasks run in minutes
with real tools. Beside ordinary scenes, the stream draws the hard contexts real photos have:

- **textured backgrounds** under text and objects (woven texture, noise, photo crops): a smooth fill (Telea) smears
  them, a patch fill copies them;
- **large holes**: an object covering the centre third of the image (`make_object_scene`), which a smooth fill cannot
  close plausibly;
- **same-colour neighbours**: a second patch of the object's colour just outside its box (in the image and in the
  true background), which a colour grounder grabs along with the object.

A stream is identified by (`seed`, `stream`): "train", "eval" and "verify" streams are disjoint by construction
(different per-task seeds). `samples` draws single-subtask samples of one kind for verification.

Example:
    >>> t = make_fasta_task(0, seed=0, stream="train")
    >>> t.image.shape[1] <= WIDE and 1 <= len(t.expected) <= MAX_STEPS
    True
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from costa.synthetic.case import BenchCase
from costa.synthetic.scenes import (
    OBJECT_COLOURS,
    ObjectScene,
    make_object_scene,
    make_text_scene,
    random_object_scene,
    scene_seeds,
)
from costa.synthetic.tasks import ADJUST_CLAUSES, Expected, SyntheticTask, contact_ops, object_op, pick, text_ops
from costa.types import Box, Subtask

WIDTH = 256
WIDE = 384  # text too long for 256 px at 20 px type is drawn at 384 × 240
#: Largest number of subtasks in one task of this stream.
MAX_STEPS = 4
_TEXT_BACKGROUNDS = ("flat", "flat", "gradient", "noise", "texture", "texture")
_OBJECT_BACKGROUNDS = ("flat", "gradient", "noise", "texture", "texture")


@dataclass(frozen=True)
class Sample:
    """One subtask on one image, for verification: the image, the subtask, the user's box (object subtasks)."""

    key: str
    image: np.ndarray
    subtask: Subtask
    box: Box | None = None


def _neighbour(rng: np.random.Generator, scene: ObjectScene) -> ObjectScene:
    """Paint a patch of the object's colour just outside its box (into the image and the true background)."""
    h, w = scene.mask.shape
    b = scene.box
    side = int(rng.integers(0, 4))
    size = max(8, min(b.w, b.h) // 2)
    margin = max(3, round(0.12 * max(b.w, b.h)))  # outside the user's box (which adds ~10 %)
    if side == 0:
        x, y = b.x2 + margin, b.y + b.h // 4
    elif side == 1:
        x, y = b.x - margin - size, b.y + b.h // 4
    elif side == 2:
        x, y = b.x + b.w // 4, b.y2 + margin
    else:
        x, y = b.x + b.w // 4, b.y - margin - size
    x, y = int(np.clip(x, 0, w - size)), int(np.clip(y, 0, h - size))
    patch = np.zeros((h, w), bool)
    patch[y : y + size, x : x + size] = True
    patch &= ~scene.mask
    image, background = scene.image.copy(), scene.background.copy()
    colour = np.array(scene.colour, np.uint8)
    image[patch] = colour
    background[patch] = colour
    return replace(scene, image=image, background=background)


def _object_scene(rng: np.random.Generator, seed: int) -> tuple[ObjectScene, str]:
    context = pick(rng, ("plain", "plain", "large", "neighbour", "textured"))
    bg = pick(rng, _OBJECT_BACKGROUNDS) if context != "textured" else "texture"
    if context == "large":
        name, rgb = pick(rng, OBJECT_COLOURS)
        scene = make_object_scene(
            bg if bg in ("flat", "gradient") else "texture",  # type: ignore[arg-type]
            pick(rng, ("ellipse", "rectangle")),
            height=192,
            width=WIDTH,
            colour=rgb,
            seed=seed,
        )
        scene = replace(scene, colour_name=name)
    else:
        scene = random_object_scene(seed, background=bg, height=192, width=WIDTH)
    if context == "neighbour":
        scene = _neighbour(rng, scene)
    return scene, context


def make_fasta_task(index: int, seed: int = 0, stream: str = "train") -> SyntheticTask:
    """Task `index` of `stream` (1–4 subtasks: object, sign or contact-card edits, then maybe an adjustment)."""
    rng = np.random.default_rng(scene_seeds(1, seed, f"fasta-{stream}-{index}")[0])
    scene_seed = int(rng.integers(2**31))
    family = pick(rng, ("sign", "sign", "contact", "object", "object", "object", "object"))
    budget = int(rng.integers(1, MAX_STEPS))
    text = obj = None
    if family == "object":
        obj, _context = _object_scene(rng, scene_seed)
        image = obj.image
        core = [object_op(rng, obj)]
    else:
        height = int(rng.integers(160, 225))
        bg = pick(rng, _TEXT_BACKGROUNDS)
        kind: Literal["sign", "contact"] = "sign" if family == "sign" else "contact"
        try:
            text = make_text_scene(scene_seed, kind=kind, background=bg, height=height, width=WIDTH)
        except ValueError:  # long lines that do not fit 256 px at 20 px type: one size up
            text = make_text_scene(scene_seed, kind=kind, background=bg, height=240, width=WIDE)
        image = text.image
        core = text_ops(rng, text, budget) if family == "sign" else contact_ops(rng, budget)
    tail: list[Expected] = []
    if len(core) < MAX_STEPS and rng.random() < (0.8 if len(core) == 1 else 0.3):
        clause, result = pick(rng, ADJUST_CLAUSES)
        tail.append(Expected("global_adjustment", clause, result=result))
    expected = tuple((*core, *tail)[:MAX_STEPS])
    instruction = " ".join(e.clause for e in expected)
    box = BenchCase(None, obj=obj).user_box() if obj is not None else None  # type: ignore[arg-type]
    return SyntheticTask(index, instruction, image, expected, family, text, obj, None, box)


def make_fasta_tasks(n: int, seed: int = 0, stream: str = "train") -> list[SyntheticTask]:
    return [make_fasta_task(i, seed, stream) for i in range(n)]


def samples(kind: str, n: int, seed: int = 0, start: int = 0) -> list[Sample]:
    """`n` fresh single-subtask samples of `kind` from the "verify" stream (tasks `start`, `start`+1, …).

    Each sample is the task's input image and one planned subtask of that kind (rule planner); kinds no task of the
    stream produces within 40 × n tasks give fewer samples.
    """
    from costa.planner import plan_with_rules
    from costa.tables import load_tables

    subtasks = load_tables().subtasks
    out: list[Sample] = []
    i = start
    while len(out) < n and i < start + 40 * n:
        task = make_fasta_task(i, seed, "verify")
        i += 1
        if not any(e.kind == kind for e in task.expected):
            continue
        plan = plan_with_rules(task.instruction, subtasks)
        for s in plan.subtasks:
            if s.kind == kind:
                out.append(
                    Sample(f"verify-{seed}-{i - 1}-{s.id}", task.image, s.model_copy(update={"parents": ()}), task.box)
                )
                break
    return out
