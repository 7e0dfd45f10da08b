"""Synthetic multi-step tasks with ground truth: plan them with the rule planner, run them, verify every subtask.

A task is an English instruction of 1–8 clauses over one synthetic scene (`costa.testing.scenes`): a sign (text edits,
reading), a contact card (redaction) or a shaded object on a background (recolouring or removal, with the object's box
given as the user's box), plus whole-image steps — a global adjustment, deblurring (the scene is then blurred first),
outpainting, upscaling. Each clause carries the outcome it must have, checked against the scene's ground truth after
the subtask that served it, never by the tools' own checks:

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

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from costa.testing.cases import BenchCase
from costa.testing.scenes import (
    NEW_WORDS,
    ObjectScene,
    TextScene,
    make_text_scene,
    random_object_scene,
    scene_seeds,
)
from costa.types import Box, Plan, TextRegion

#: Largest number of subtasks in one task.
MAX_SUBTASKS = 8
_ADJUST_CLAUSES: tuple[tuple[str, str], ...] = (
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


# ---------------------------------------------------------------------------------------------------- generation


def _pick(rng: np.random.Generator, items: Sequence[Any]) -> Any:
    return items[int(rng.integers(len(items)))]


def _text_ops(rng: np.random.Generator, scene: TextScene, budget: int) -> list[Expected]:
    """Up to `budget` text clauses on distinct words of a sign: replace, remove, highlight, add; reading first."""
    words = [w.text for w in scene.words]
    words = [words[i] for i in rng.permutation(len(words))]
    fresh = [NEW_WORDS[i] for i in rng.permutation(len(NEW_WORDS))]
    ops: list[Expected] = []
    if budget > 0 and rng.random() < 0.35:
        kind = _pick(rng, ("text_extraction", "text_detection"))
        clause = "Read the text." if kind == "text_extraction" else "Detect the text."
        ops.append(Expected(kind, clause))
    for word in words:
        if len(ops) >= budget:
            break
        choice = _pick(rng, ("replace", "replace", "remove", "highlight"))
        if choice == "replace":
            new = fresh.pop()
            verb = _pick(rng, ("Replace the text '{w}' with '{n}'.", "Change the word '{w}' to '{n}'."))
            ops.append(Expected("text_replacement", verb.format(w=word, n=new), word=word, new=new))
        elif choice == "remove":
            verb = _pick(rng, ("Remove the text '{w}'.", "Erase the word '{w}'."))
            ops.append(Expected("text_removal", verb.format(w=word), word=word))
        else:
            ops.append(Expected("keyword_highlighting", f"Highlight the word '{word}'.", word=word))
    if len(ops) < budget and rng.random() < 0.5:
        new = fresh.pop()
        ops.append(Expected("text_addition", f"Add the text '{new}'.", new=new))
    return ops


def _contact_ops(rng: np.random.Generator, budget: int) -> list[Expected]:
    ops = [Expected("text_redaction", "Redact the phone number.", span="phone number")]
    if budget > 1 and rng.random() < 0.5:
        ops.append(Expected("text_redaction", "Redact the email address.", span="email"))
    return ops[:budget]


def _object_op(rng: np.random.Generator, scene: ObjectScene) -> Expected:
    if rng.random() < 0.5:
        colour = _pick(rng, [c for c in _RECOLOUR_TARGETS if c != scene.colour_name])
        clause = _pick(rng, ("Make the object {c}.", "Recolor the object to {c}.")).format(c=colour)
        return Expected("object_recoloration", clause, colour=colour)
    return Expected("object_removal", "Remove the object.")


def make_task(index: int, seed: int) -> SyntheticTask:
    """Task number `index` of the suite drawn from `seed` (see the module docstring)."""
    import cv2

    rng = np.random.default_rng(scene_seeds(1, seed, f"task-{index}")[0])
    scene_seed = int(rng.integers(2**31))
    family = _pick(rng, ("sign", "sign", "sign", "contact", "object", "object"))
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
        core = _text_ops(rng, text, budget)
    elif family == "contact":
        core = _contact_ops(rng, budget)
    else:
        assert obj is not None
        core = [_object_op(rng, obj)]
    head: list[Expected] = []
    sharp = None
    if wants_deblur:
        sharp = image
        blurred = cv2.GaussianBlur(image.astype(np.float32), (0, 0), float(rng.uniform(1.2, 2.0)))
        blurred += np.asarray(rng.normal(0.0, 1.0, blurred.shape), dtype=np.float32)
        image = np.clip(np.rint(blurred), 0, 255).astype(np.uint8)
        head.append(Expected("image_deblurring", _pick(rng, ("Deblur the image.", "Sharpen the image."))))
    if wants_outpaint:
        clause, result, params = _pick(rng, _OUTPAINT_CLAUSES)
        head.append(Expected("outpainting", clause, result=result, params=dict(params)))
    tail: list[Expected] = []
    groups: set[str] = set()  # one adjustment per quantity: "brighter and darker" would be a contradiction
    for _ in range(n_adjust):
        clause, result = _pick(rng, _ADJUST_CLAUSES)
        group = _ADJUST_GROUP.get(result, "colour")
        if group not in groups:
            groups.add(group)
            tail.append(Expected("global_adjustment", clause, result=result))
    if wants_upscale:
        factor = _pick(rng, ("2", "2", "3"))
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


# --------------------------------------------------------------------------------------------------- verification


@dataclass
class _Frame:
    """Where the scene's ground truth sits in the current image: p_current = p_scene × scale + (dx, dy)."""

    scale: float = 1.0
    dx: float = 0.0
    dy: float = 0.0
    pixels_changed: bool = False  # some earlier subtask changed pixels (then true-background PSNR is not measured)

    def box(self, b: Box) -> Box:
        return Box(
            round(b.x * self.scale + self.dx),
            round(b.y * self.scale + self.dy),
            max(1, round(b.w * self.scale)),
            max(1, round(b.h * self.scale)),
        )

    @property
    def identity(self) -> bool:
        return self.scale == 1.0 and self.dx == 0.0 and self.dy == 0.0


@dataclass(frozen=True)
class SubtaskVerdict:
    """One expected subtask's outcome: passed against ground truth, and why."""

    kind: str
    clause: str
    passed: bool
    reason: str


@dataclass(frozen=True)
class TaskResult:
    index: int
    instruction: str
    family: str
    verdicts: tuple[SubtaskVerdict, ...]
    seconds: float
    executions: int
    error: str = ""
    reported_done: bool = False  # the turn said every subtask was done (TurnDone.ok)
    retries: int = 0  # reflection retries the turn made
    turn_cpu_seconds: float = 0.0  # this process's CPU seconds in the turn itself (not planning or verification)

    @property
    def success(self) -> bool:
        return not self.error and all(v.passed for v in self.verdicts)


def _overlap(a: Box, b: Box) -> float:
    """Share of the smaller box that the two boxes share."""
    w = min(a.x2, b.x2) - max(a.x, b.x)
    h = min(a.y2, b.y2) - max(a.y, b.y)
    return 0.0 if w <= 0 or h <= 0 else w * h / float(min(a.w * a.h, b.w * b.h))


def _read_tiles(reader: Any, image: np.ndarray) -> list[TextRegion]:
    """OCR of `image` in 2×2 overlapping tiles, each read at twice its size (regions in tile coordinates: only their
    text is used). The ground truth's second look, where the added word is at no known place."""
    import cv2

    h, w = image.shape[:2]
    out: list[TextRegion] = []
    for y0 in (0, h // 3):
        for x0 in (0, w // 3):
            tile = np.ascontiguousarray(image[y0 : y0 + 2 * h // 3, x0 : x0 + 2 * w // 3])
            out.extend(reader.read(cv2.resize(tile, None, fx=2.0, fy=2.0, interpolation=cv2.INTER_CUBIC)))
    return out


def _reads(regions: Sequence[TextRegion], word: str) -> list[TextRegion]:
    """Regions in which OCR read `word` (as the text tools match it: case-insensitive, tolerant)."""
    from costa.textmatch import find_matches

    return [m.region for m in find_matches(regions, f"'{word}'")]


def _verify(
    task: SyntheticTask,
    e: Expected,
    before: np.ndarray,
    after: np.ndarray | None,
    result: str,
    frame: _Frame,
    words: list[str],
    reader: Any,
) -> tuple[bool, str]:
    """Check one subtask's outcome against the task's ground truth (see the table in the module docstring)."""
    from costa.imagestats import lab_stats, psnr

    if e.kind in ("text_extraction", "text_detection"):
        found = [w for w in words if w.lower() in result.lower()]
        share = len(found) / max(1, len(words))
        return share >= 0.8, f"result names {len(found)}/{len(words)} words: {result[:80]!r}"
    if after is None:
        return False, "the subtask produced no image"
    if e.kind in ("text_replacement", "text_removal", "text_addition", "keyword_highlighting", "text_redaction"):
        regions = reader.read(after)
        read = [r.text for r in regions]
        if e.kind == "text_redaction":
            from costa.textmatch import find_matches

            left = find_matches(regions, e.span)
            return not left, f"OCR reads {[m.text for m in left]} of kind {e.span!r}" if left else "no such text left"
        if e.kind == "text_addition":
            if not _reads(regions, e.new or ""):  # one read of a whole busy photo misses small words: read in tiles
                regions = [*regions, *_read_tiles(reader, after)]
                read = [r.text for r in regions]
            return bool(_reads(regions, e.new or "")), f"OCR reads {read}"
        assert task.text is not None and e.word is not None
        gt = frame.box(next(w.box for w in task.text.words if w.text == e.word))
        if e.kind == "text_replacement":
            new_here = [r for r in _reads(regions, e.new or "") if _overlap(r.box, gt) >= 0.3]
            old = _reads(regions, e.word)
            ok = bool(new_here) and not old
            return ok, f"new word over the old place: {bool(new_here)}; old word still read: {bool(old)}; OCR {read}"
        if e.kind == "text_removal":
            old = _reads(regions, e.word)
            if old:
                return False, f"OCR still reads {e.word!r}: {read}"
            if frame.identity and not frame.pixels_changed:
                ink = task.text.ink & Box(gt.x - 2, gt.y - 2, gt.w + 4, gt.h + 4).to_mask(*after.shape[:2])
                if ink.any():
                    value = psnr(after[ink][None], task.text.background[ink][None])
                    return value >= 20.0, f"erased ink vs true background PSNR {value:.1f} dB (≥20)"
            return True, "OCR no longer reads it"
        here = [r for r in _reads(regions, e.word) if _overlap(r.box, gt) >= 0.3]
        if not here:
            return False, f"OCR no longer reads {e.word!r} at its place: {read}"
        mask = gt.clip(after.shape[1], after.shape[0]).to_mask(*after.shape[:2])
        moved = lab_stats(after, mask).b - lab_stats(before, mask).b
        return moved >= 4.0, f"word still read; mean b* over it {moved:+.1f} (≥4)"
    if e.kind == "object_recoloration":
        from costa.checks.common import ciede2000_values
        from costa.colours import parse_colour
        from costa.masks import erode_mask

        assert task.obj is not None
        rgb = parse_colour(e.colour or "")
        if rgb is None or not frame.identity:
            return False, f"cannot verify colour {e.colour!r} here"
        mask = erode_mask(task.obj.mask, 2)
        median = float(np.median(ciede2000_values(after, mask, rgb)))
        return median <= 15.0, f"median ΔE2000 to {e.colour} {median:.1f} (≤15)"
    if e.kind == "object_removal":
        from costa.masks import dilate_mask

        assert task.obj is not None
        if not frame.identity:
            return False, "cannot verify the removal after a geometry change"
        region = dilate_mask(task.obj.mask, 2)
        value = psnr(after[region][None], task.obj.background[region][None])
        if value >= 20.0:
            return True, f"removed region vs true background PSNR {value:.1f} dB (≥20)"
        # A photo's hidden content cannot be known from its surroundings: there, being much closer to it than the
        # object was is what a good fill can do.
        was = psnr(before[region][None], task.obj.background[region][None])
        ok = task.obj.background_kind == "photo" and value >= was + 5.0
        return ok, f"removed region vs true background PSNR {value:.1f} dB (≥20, or +5 over {was:.1f} on photos)"
    if e.kind == "global_adjustment":
        if after.shape != before.shape:
            return False, "the size changed"
        sb, sa = lab_stats(before), lab_stats(after)
        r = e.result or ""
        checks = {
            "brighter": (sa.lightness - sb.lightness >= 1.5, f"L* {sb.lightness:.1f} → {sa.lightness:.1f}"),
            "darker": (sb.lightness - sa.lightness >= 1.5, f"L* {sb.lightness:.1f} → {sa.lightness:.1f}"),
            "more contrast": (sa.contrast >= 1.05 * sb.contrast, f"L* spread {sb.contrast:.1f} → {sa.contrast:.1f}"),
            "less contrast": (sb.contrast >= 1.05 * sa.contrast, f"L* spread {sb.contrast:.1f} → {sa.contrast:.1f}"),
            "more saturated": (sa.chroma >= 1.05 * sb.chroma, f"chroma {sb.chroma:.1f} → {sa.chroma:.1f}"),
            "less saturated": (sb.chroma >= 1.05 * sa.chroma, f"chroma {sb.chroma:.1f} → {sa.chroma:.1f}"),
            "warmer": (sa.b - sb.b >= 1.5, f"b* {sb.b:.1f} → {sa.b:.1f}"),
            "cooler": (sb.b - sa.b >= 1.5, f"b* {sb.b:.1f} → {sa.b:.1f}"),
            "grayscale": (sa.chroma <= 3.0, f"chroma {sa.chroma:.1f} (≤3)"),
            "sepia": (sa.b >= 5.0, f"b* {sa.b:.1f} (≥5)"),
        }
        ok, why = checks.get(r, (False, f"unknown adjustment {r!r}"))
        return ok, why
    if e.kind == "image_upscaling":
        import cv2

        factor = float(e.result or 2)
        want = (round(before.shape[0] * factor), round(before.shape[1] * factor))
        if after.shape[:2] != want:
            return False, f"size {after.shape[1]}x{after.shape[0]}, expected {want[1]}x{want[0]}"
        back = cv2.resize(after, (before.shape[1], before.shape[0]), interpolation=cv2.INTER_AREA)
        value = psnr(back, before)
        return value >= 28.0, f"×{factor:g}; shrunk back vs before PSNR {value:.1f} dB (≥28)"
    if e.kind == "image_deblurring":
        if task.sharp is None or not frame.identity or after.shape != task.sharp.shape:
            return False, "no sharp truth to compare with here"
        gain = psnr(after, task.sharp) - psnr(before, task.sharp)
        return gain >= 0.3, f"PSNR to the sharp scene {gain:+.2f} dB (≥0.3)"
    if e.kind == "outpainting":
        from costa.errors import ToolError
        from costa.tools.outpaint import outpaint_margins

        try:
            m = outpaint_margins(before.shape[0], before.shape[1], e.result, e.params)
        except ToolError as err:
            return False, str(err)
        want = m.new_size(before.shape[0], before.shape[1])
        if after.shape[:2] != want:
            return False, f"canvas {after.shape[1]}x{after.shape[0]}, expected {want[1]}x{want[0]}"
        inner = after[m.top : m.top + before.shape[0], m.left : m.left + before.shape[1]]
        same = bool(np.array_equal(inner, before))
        return same, "original kept at its offset" if same else "the original moved or changed"
    return False, f"no ground truth for {e.kind!r}"


def _advance(frame: _Frame, kind: str, before: np.ndarray, after: np.ndarray, e: Expected | None) -> None:
    """Move the ground-truth frame through a subtask that changed the geometry or the pixels."""
    if kind == "outpainting" and e is not None:
        from costa.tools.outpaint import outpaint_margins

        m = outpaint_margins(before.shape[0], before.shape[1], e.result, e.params)
        frame.dx += m.left
        frame.dy += m.top
    elif kind == "image_upscaling":
        f = after.shape[1] / before.shape[1]
        frame.scale *= f
        frame.dx *= f
        frame.dy *= f
    if kind != "image_deblurring":
        frame.pixels_changed = True


def _words_after(words: list[str], e: Expected) -> list[str]:
    if e.kind == "text_replacement":
        return [(e.new or "") if w == e.word else w for w in words]
    if e.kind == "text_removal":
        return [w for w in words if w != e.word]
    if e.kind == "text_addition":
        return [*words, e.new or ""]
    return words


def _match(plan: Plan, expected: Sequence[Expected]) -> dict[str, Expected]:
    """Planned subtask id → the expected clause it serves (same kind, same word or result), in order."""
    free = list(expected)
    out: dict[str, Expected] = {}
    for s in plan.subtasks:
        for e in free:
            if e.kind != s.kind:
                continue
            same_word = e.word is None or (s.target or "").strip("'\" ").lower() == e.word.lower()
            same_new = e.new is None or (s.result or "").strip("'\" ").lower() == e.new.lower()
            same_result = e.kind != "global_adjustment" or s.result == e.result
            if same_word and same_new and same_result:
                out[s.id] = e
                free.remove(e)
                break
    return out


def run_task(services: Any, task: SyntheticTask, alpha: float | None = None) -> TaskResult:
    """Plan `task` with the rule planner, run it (with the object's box as the user's box), verify each subtask."""
    from costa.agent import UserRegion, run_turn
    from costa.errors import CostaError
    from costa.events import SubtaskDone, ToolFailed, ToolFinished, TurnDone
    from costa.planner import plan_with_rules

    t0 = time.perf_counter()
    try:
        plan = plan_with_rules(task.instruction, services.tables.subtasks)
    except CostaError as e:
        verdicts = tuple(SubtaskVerdict(x.kind, x.clause, False, "not planned") for x in task.expected)
        return TaskResult(task.index, task.instruction, task.family, verdicts, 0.0, 0, f"planning failed: {e}")
    region = UserRegion(boxes=(task.box,)) if task.box is not None else None
    done: dict[str, SubtaskDone] = {}
    turn: TurnDone | None = None
    passed: set[str] = set()  # subtasks whose final step passed its check on some path
    failed: dict[str, str] = {}  # subtask id → the last failure of a final step
    retries = 0
    cpu0 = time.process_time()
    try:
        for ev in run_turn(services, task.image, plan, alpha=alpha, region=region):
            if ev.kind == "reflection_retry":
                retries += 1
            if isinstance(ev, SubtaskDone):
                done[ev.subtask_id] = ev
            elif isinstance(ev, TurnDone):
                turn = ev
            elif isinstance(ev, ToolFinished):
                goal = services.tables.subtasks[plan.by_id(ev.subtask_id).kind].produces
                if goal in services.tables.tools[ev.tool].outputs:
                    if ev.passed:
                        passed.add(ev.subtask_id)
                    else:
                        failed[ev.subtask_id] = f"{ev.tool} q={ev.quality:.2f}: {'; '.join(ev.reasons[:2])}"
            elif isinstance(ev, ToolFailed) and ev.subtask_id not in failed:
                failed[ev.subtask_id] = f"{ev.tool}: {ev.reason}"
    except CostaError as e:
        verdicts = tuple(SubtaskVerdict(x.kind, x.clause, False, "the turn failed") for x in task.expected)
        return TaskResult(task.index, task.instruction, task.family, verdicts, time.perf_counter() - t0, 0, str(e))
    turn_cpu = time.process_time() - cpu0
    matched = _match(plan, task.expected)
    by_index: dict[int, SubtaskVerdict] = {}
    frame = _Frame()
    words = [w.text for w in task.text.words] if task.text is not None else []
    current = task.image
    edits = {s.id: services.tables.subtasks[s.kind].edits_image for s in plan.subtasks}
    for s in plan.subtasks:
        want = matched.get(s.id)
        sd = done.get(s.id)
        after = sd.image if sd is not None and edits[s.id] else None
        if want is not None:
            key = task.expected.index(want)
            if sd is None:
                skipped = turn.skipped.get(s.id) if turn is not None else None
                blockers = [b.kind for b in plan.subtasks if b.id not in passed and b.id in failed]
                if skipped:
                    why = f"no ready tool: {skipped}"
                elif s.id in failed and s.id not in passed:
                    why = f"no tool passed its check ({failed[s.id]})"
                elif s.id not in passed:
                    why = f"never run: the search gave up at {', '.join(blockers) or 'an earlier subtask'}"
                else:
                    why = f"its step passed, but the turn failed on {', '.join(blockers) or 'another subtask'}"
                by_index[key] = SubtaskVerdict(want.kind, want.clause, False, why[:240])
            else:
                ok, why = _verify(task, want, current, after, sd.result, frame, words, services.reader)
                by_index[key] = SubtaskVerdict(want.kind, want.clause, ok, why)
            words = _words_after(words, want)
        if after is not None:
            _advance(frame, s.kind, current, after, want)
            current = after
    out = tuple(
        by_index.get(i, SubtaskVerdict(want.kind, want.clause, False, "the planner made no subtask for it"))
        for i, want in enumerate(task.expected)
    )
    executions = turn.executions if turn is not None else 0
    ok = bool(turn is not None and turn.ok)
    seconds = time.perf_counter() - t0
    return TaskResult(task.index, task.instruction, task.family, out, seconds, executions, "", ok, retries, turn_cpu)
