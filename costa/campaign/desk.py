"""The evaluator's desk behind the Campaign tab: a blind queue, one subtask card at a time, scores, the admin view.

A `Card` is everything an evaluator sees of one subtask: the task's instructions, what the subtask was asked to do,
the image before and after it (and a reference result made by people, when the task has one) and their own earlier
score. It carries nothing that reveals the condition (α, mode, reflection, timings) or costa's own verdict (done,
proposed, quality, tools): those stay in the store for the admin view and the report.

The queue of an evaluator is the items assigned to them that have finished running, in their own random order,
each item's subtasks in turn order. An evaluator sees and scores only their own items.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

import numpy as np

from costa.campaign.db import CampaignDb
from costa.campaign.records import Unit
from costa.campaign.report import CampaignData, build_report, plot
from costa.campaign.stats import ScoreRow
from costa.errors import InputError

#: Longest side of an image sent to the page, in pixels (an upscaled 3,000 px result is shown downscaled).
SHOW_PX = 1280


@dataclass(frozen=True)
class Card:
    """One subtask to score, as the evaluator sees it (blind: see the module docstring)."""

    item: str  # opaque item id (it names neither the task nor the condition)
    unit: str
    index: int  # 0-based position in the evaluator's queue of subtasks
    total: int  # subtasks in the queue
    item_number: int  # 1-based among the evaluator's items
    items: int
    turns: tuple[str, ...]  # the task's instructions, in order
    turn: int  # 1-based: the turn this subtask belongs to
    description: str
    answer: str  # a read-only subtask's text result
    before: np.ndarray
    after: np.ndarray
    reference: np.ndarray | None  # the turn's human-made target, when the task has one
    score: float | None  # the evaluator's own earlier score
    comment: str
    scored: int  # subtasks of the queue the evaluator has scored
    #: the before and after images' own sizes as (width, height) in pixels: the slider shows both at one display
    #: size, so an upscaling or an extension cannot be judged without them
    sizes: tuple[tuple[int, int], tuple[int, int]] = ((0, 0), (0, 0))


@dataclass(frozen=True)
class EvaluatorProgress:
    evaluator: str
    assigned_items: int
    ready_items: int  # finished running, in the queue
    ready_subtasks: int
    scored_subtasks: int


def _fit(image: np.ndarray, side: int = SHOW_PX) -> np.ndarray:
    from PIL import Image

    h, w = image.shape[:2]
    if max(h, w) <= side:
        return image
    scale = side / max(h, w)
    return np.asarray(
        Image.fromarray(image).resize((max(1, round(w * scale)), max(1, round(h * scale))), Image.Resampling.LANCZOS)
    )


def with_boxes(image: np.ndarray, boxes: tuple[tuple[int, int, int, int, str], ...]) -> np.ndarray:
    """`image` with a detection subtask's boxes drawn (outline and label, in pixels of `image`), so an evaluator
    judges what was found by eye; the image itself when there are none."""
    if not boxes:
        return image
    from PIL import Image, ImageDraw

    pil = Image.fromarray(image)
    d = ImageDraw.Draw(pil)
    width = max(2, min(image.shape[:2]) // 200)
    for x, y, w, h, label in boxes:
        d.rectangle((x, y, x + w - 1, y + h - 1), outline=(255, 0, 140), width=width)
        if label:
            d.text((x + width + 2, y + width + 1), label, fill=(255, 255, 255), stroke_width=2, stroke_fill=(0, 0, 0))
    return np.asarray(pil, dtype=np.uint8)


def pair_for_slider(before: np.ndarray, after: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Before and after at one display size: scaled alike when the aspect is kept (upscaling), otherwise the before
    image centred on a grey canvas of the after image's size (outpainting added margins)."""
    from PIL import Image

    after = _fit(after)
    h, w = after.shape[:2]
    if before.shape[:2] == after.shape[:2]:
        return before, after
    bh, bw = before.shape[:2]
    if abs(bw / bh - w / h) < 0.01:
        return np.asarray(Image.fromarray(before).resize((w, h), Image.Resampling.LANCZOS)), after
    scale = min(w / bw, h / bh, 1.0)
    small = np.asarray(Image.fromarray(before).resize((max(1, round(bw * scale)), max(1, round(bh * scale)))))
    canvas = np.full((h, w, 3), 128, np.uint8)
    y, x = (h - small.shape[0]) // 2, (w - small.shape[1]) // 2
    canvas[y : y + small.shape[0], x : x + small.shape[1]] = small
    return canvas, after


class CampaignDesk:
    """Queues, cards, scores and the admin view over one session core's store."""

    def __init__(self, core: Any) -> None:
        self.core = core
        self.db = CampaignDb(core.store)

    def campaigns(self) -> list[str]:
        return self.db.names()

    def check_evaluator(self, name: str, evaluator: Any) -> str:
        """The evaluator's name, if they are one of the campaign's evaluators.

        Raises:
            InputError: no name given, or not an evaluator of this campaign.
        """
        campaign = self.db.campaign(name)
        who = evaluator.strip() if isinstance(evaluator, str) else ""
        if not who:
            raise InputError("type your evaluator name first (or sign in)")
        if who not in campaign.evaluators:
            raise InputError(f"{who!r} is not an evaluator of campaign {name!r}: ask its admin to add you")
        return who

    def check_admin(self, name: str, user: str | None, login: bool) -> None:
        """Refuse the admin view (it reveals conditions and costa's verdicts) to a signed-in user who is not one of
        the campaign's admins; without login the page is one person's, who may open it.

        Raises:
            InputError: login is on and `user` is not an admin of the campaign.
        """
        campaign = self.db.campaign(name)
        if login and user not in campaign.admins:
            raise InputError(f"only the admins of campaign {name!r} see its progress and agreement")

    def queue(self, name: str, evaluator: str) -> list[tuple[str, str]]:
        return self.db.queue_units(name, self.check_evaluator(name, evaluator))

    def first_open(self, name: str, evaluator: str) -> int:
        """Index of the evaluator's first subtask not scored yet (the last one when all are)."""
        queue = self.queue(name, evaluator)
        mine = {(s.item, s.unit) for s in self.db.scores(name, evaluator)}
        for i, key in enumerate(queue):
            if key not in mine:
                return i
        return max(0, len(queue) - 1)

    def card(self, name: str, evaluator: str, index: int) -> Card | None:
        """The evaluator's subtask at `index` (clipped to the queue), or None when nothing is ready yet."""
        queue = self.queue(name, evaluator)
        if not queue:
            return None
        index = min(max(0, int(index)), len(queue) - 1)
        item_id, unit_id = queue[index]
        mine = {(s.item, s.unit): s for s in self.db.scores(name, evaluator)}
        item = self.db.item(item_id)
        units = self.db.item_units(item_id)
        unit = next(u for u in units if u.unit == unit_id)
        task = self.db.campaign(name).tasks.by_id(item.task_id)
        before, after, sizes = self._images(item.session_id, unit)
        reference = None
        target = task.turns[unit.turn - 1].target if unit.turn <= len(task.turns) else None
        if target is not None:
            from costa.images import load_image

            reference = _fit(load_image(target.read_bytes(), self.core.settings.max_pixels))
        order = list(dict.fromkeys(i for i, _ in queue))
        own = mine.get((item_id, unit_id))
        return Card(
            item_id, unit_id, index, len(queue), order.index(item_id) + 1, len(order),
            tuple(t.instruction for t in task.turns), unit.turn, unit.description, unit.answer, before, after,
            reference, own.score if own else None, own.comment if own else "", sum(k in mine for k in queue), sizes,
        )  # fmt: skip

    def _images(
        self, session_id: str | None, unit: Unit
    ) -> tuple[np.ndarray, np.ndarray, tuple[tuple[int, int], tuple[int, int]]]:
        store = self.core.store
        if session_id is None or unit.before_version is None:
            # no id in the message: the evaluator's page must not name items (blind scoring)
            raise InputError(
                "this subtask's images were not stored (run with an older costa): ask the admin to run it again"
            )
        before = store.load_image(store.version(session_id, unit.before_version))
        after_v = unit.after_version if unit.after_version is not None else unit.before_version
        after = store.load_image(store.version(session_id, after_v))
        shown_before, shown_after = pair_for_slider(before, with_boxes(after, unit.boxes))
        sizes = ((before.shape[1], before.shape[0]), (after.shape[1], after.shape[0]))
        return shown_before, shown_after, sizes

    def save(self, name: str, evaluator: str, item: str, unit: str, score: Any, comment: Any = "") -> int:
        """Save the evaluator's score of one of their subtasks; return the index of the card to show next."""
        return save_score(self.db, name, self.check_evaluator(name, evaluator), item, unit, score, comment)

    # -------------------------------------------------------------------------------------------------- admin

    def progress(self, name: str) -> list[EvaluatorProgress]:
        return progress(self.db, name)

    def data(self, name: str) -> CampaignData:
        return CampaignData(self.db.campaign(name), self.db.items(name), self.db.units(name), self.db.scores(name))

    def admin(self, name: str) -> tuple[list[EvaluatorProgress], dict[str, Any], np.ndarray]:
        """Progress per evaluator, the report so far (agreement included) and its plot as an RGB image."""
        from PIL import Image

        data = self.data(name)
        report = build_report(data)
        buf = io.BytesIO()
        plot(report, buf, f"campaign {name}: cost vs human-scored quality")
        buf.seek(0)
        with Image.open(buf) as img:
            image = np.asarray(img.convert("RGB"))
        return self.progress(name), report, image


def progress(db: CampaignDb, name: str) -> list[EvaluatorProgress]:
    """Per evaluator: items assigned, items ready (run), subtasks ready and scored."""
    campaign = db.campaign(name)
    assigned = db.assigned(name)
    scores = db.scores(name)
    out = []
    for ev in campaign.evaluators:
        queue = db.queue_units(name, ev)
        mine = {(s.item, s.unit) for s in scores if s.evaluator == ev}
        ready = len({i for i, _ in queue})
        out.append(EvaluatorProgress(ev, len(assigned.get(ev, [])), ready, len(queue), sum(k in mine for k in queue)))
    return out


def save_score(db: CampaignDb, name: str, evaluator: str, item: str, unit: str, score: Any, comment: Any) -> int:
    """Save `evaluator`'s score of one subtask of their queue; return the index of the card to show next: the next
    subtask not scored yet after this one, else simply the next one.

    Raises:
        InputError: the subtask is not in the evaluator's queue, or the score is not 0, 0.1 … 0.9 or 1.
    """
    queue = db.queue_units(name, evaluator)
    if (item, unit) not in queue:
        raise InputError("this subtask is not in your queue")
    try:
        value = float(score)
    except (TypeError, ValueError) as e:
        raise InputError(f"score must be 0, 0.1 … 0.9 or 1, got {score!r}") from e
    text = comment.strip() if isinstance(comment, str) else ""
    db.save_scores(name, [ScoreRow(item, unit, evaluator, value, text[:2000])])
    mine = {(s.item, s.unit) for s in db.scores(name, evaluator)}
    here = queue.index((item, unit))
    later = [i for i in range(here + 1, len(queue)) if queue[i] not in mine]
    return later[0] if later else min(here + 1, len(queue) - 1)
