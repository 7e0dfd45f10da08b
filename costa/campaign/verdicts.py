"""Human verdicts as labelled real cases for the real-photo calibration (`costa.calibration`, `bench real --write`).

Every subtask evaluators scored in a campaign is a case on a real image with a person's judgement: what costa ran
(kind, final tool), in what context (content and region class of the calibration's `StepContext`, how the task
pointed), what costa said (`costa`: done / proposed / unverified / failed / …) and what the people said (`score`, the
mean of their scores; `right` when it reaches `RIGHT_AT`, 0.8). `passed_checks` marks the cases whose steps passed
costa's checks (done or proposed): those are the ones a calibration's precision counts.

    from costa.campaign.verdicts import human_verdicts
    for v in human_verdicts(store):          # every campaign in the store (or campaign="name")
        if v.passed_checks: ...              # v.kind, v.tool, v.content, v.region, v.pointing, v.right
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from costa.campaign.db import CampaignDb
from costa.campaign.stats import RIGHT_AT, unit_means

#: A pixel counts as changed by a subtask when a channel moved by more than this (0–255): JPEG-like noise does not.
CHANGED_LEVEL = 12


@dataclass(frozen=True)
class HumanVerdict:
    campaign: str
    item: str
    unit: str
    kind: str
    tool: str
    content: str  # "photo" | "graphic" (costa.calibration.content_class of the image before the subtask)
    region: (
        str  # "none" | "small" | "medium" | "large": region_class of the pixels it changed ("none": whole-image kind)
    )
    pointing: str  # "none" | "click" | "box" | "brush"
    costa: str  # costa's own verdict
    score: float  # the evaluators' mean
    evaluators: int
    right: bool

    @property
    def passed_checks(self) -> bool:
        return self.costa in ("done", "proposed")


def _classes(store: Any, session_id: str | None, before_v: int | None, after_v: int | None) -> tuple[str, str]:
    from costa.calibration import content_class, region_class

    if session_id is None or before_v is None:
        return "", ""
    before = store.load_image(store.version(session_id, before_v))
    after = store.load_image(store.version(session_id, after_v)) if after_v is not None else before
    mask = None
    if before.shape == after.shape:
        changed = np.abs(before.astype(np.int16) - after.astype(np.int16)).max(axis=2) > CHANGED_LEVEL
        mask = changed if changed.any() else None
    return content_class(before), region_class(mask, before.shape[:2])


def human_verdicts(store: Any, campaign: str | None = None) -> list[HumanVerdict]:
    """Every scored subtask of `campaign` (default: of every campaign in the store) as a labelled case."""
    from costa.tables import load_tables

    whole = {k for k, spec in load_tables().subtasks.items() if spec.whole_image}
    db = CampaignDb(store)
    out: list[HumanVerdict] = []
    for name in [campaign] if campaign else db.names():
        scores = db.scores(name)
        means = unit_means(scores)
        counts: dict[tuple[str, str], int] = {}
        for s in scores:
            counts[s.item, s.unit] = counts.get((s.item, s.unit), 0) + 1
        sessions = {i.id: i.session_id for i in db.items(name, ("done",))}
        for u in db.units(name):
            m = means.get((u.item_id, u.unit))
            if m is None:
                continue
            content, region = _classes(store, sessions.get(u.item_id), u.before_version, u.after_version)
            if u.kind in whole:  # the calibration's context: a whole-image step consumes no region
                region = "none"
            out.append(
                HumanVerdict(name, u.item_id, u.unit, u.kind, u.tool, content, region, u.pointing, u.verdict, m,
                             counts[u.item_id, u.unit], m >= RIGHT_AT)
            )  # fmt: skip
    return out
