"""A campaign's figures from its scores: accuracy as CoSTA*'s human evaluation defines it, and evaluator agreement.

- A subtask's human score is the mean of its evaluators' scores; a task's accuracy (one item: a task under one
  condition) is the mean of its scored subtasks; a condition's task accuracy is the mean over its items; subtask
  accuracy per category is the mean of the category's subtask scores.
- Agreement: Krippendorff's α at the interval level over every (item, subtask) unit (the `krippendorff` package;
  units scored once count for nothing, as α defines), and Cohen's κ for every pair of evaluators on the units both
  scored (scikit-learn's `cohen_kappa_score`, linearly weighted over the 11 ordered levels 0, 0.1 … 1, so 0.9 vs 1 is a
  small disagreement and 0 vs 1 a full one). A figure that is not defined (fewer than two evaluators on any unit, a
  pair that shares no unit, one level used throughout) is None, never a made-up number.

Example:
    >>> rows = [ScoreRow("i1", "s1", "a", 1.0), ScoreRow("i1", "s1", "b", 0.5), ScoreRow("i1", "s2", "a", 0.0)]
    >>> unit_means(rows)
    {('i1', 's1'): 0.75, ('i1', 's2'): 0.0}
    >>> item_accuracy(unit_means(rows))
    {'i1': 0.375}
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: A subtask is right by the evaluators when their mean score reaches this (the steps' quality threshold, 0.8).
RIGHT_AT = 0.8
#: The score levels as integers 0 … 10 (tenths), the labels κ is computed over.
LEVELS = tuple(range(11))


@dataclass(frozen=True)
class ScoreRow:
    """One evaluator's score of one subtask (`unit`) of one item, in {0, 0.1 … 0.9, 1}."""

    item: str
    unit: str
    evaluator: str
    score: float
    comment: str = ""


@dataclass(frozen=True)
class PairKappa:
    evaluators: tuple[str, str]
    n: int  # units both scored
    kappa: float | None


@dataclass(frozen=True)
class Agreement:
    krippendorff_alpha_interval: float | None
    pairs: tuple[PairKappa, ...] = field(default=())
    units: int = 0  # units scored by at least two evaluators

    @property
    def pairwise_cohen_kappa(self) -> float | None:
        """Mean κ over the pairs where it is defined, weighted by the units each pair shares."""
        defined = [p for p in self.pairs if p.kappa is not None and p.n > 0]
        if not defined:
            return None
        return sum(p.kappa * p.n for p in defined if p.kappa is not None) / sum(p.n for p in defined)

    def as_dict(self) -> dict[str, Any]:
        return {
            "krippendorff_alpha_interval": _round(self.krippendorff_alpha_interval),
            "pairwise_cohen_kappa": _round(self.pairwise_cohen_kappa),
            "pairs": [{"evaluators": list(p.evaluators), "n": p.n, "kappa": _round(p.kappa)} for p in self.pairs],
        }


def _round(x: float | None, digits: int = 4) -> float | None:
    return None if x is None or not math.isfinite(x) else round(float(x), digits)


def mean(values: Iterable[float]) -> float | None:
    v = list(values)
    return sum(v) / len(v) if v else None


def unit_means(scores: Iterable[ScoreRow]) -> dict[tuple[str, str], float]:
    """(item, unit) → the mean of its evaluators' scores."""
    acc: dict[tuple[str, str], list[float]] = {}
    for s in scores:
        acc.setdefault((s.item, s.unit), []).append(s.score)
    return {k: round(sum(v) / len(v), 6) for k, v in acc.items()}


def item_accuracy(means: Mapping[tuple[str, str], float]) -> dict[str, float]:
    """item → the mean of its scored units' human scores (the task's accuracy under that item's condition)."""
    acc: dict[str, list[float]] = {}
    for (item, _), m in means.items():
        acc.setdefault(item, []).append(m)
    return {k: round(sum(v) / len(v), 6) for k, v in acc.items()}


def krippendorff_interval(scores: Sequence[ScoreRow]) -> tuple[float | None, int]:
    """Krippendorff's α (interval) over all units, and the number of units at least two evaluators scored."""
    import krippendorff

    evaluators = sorted({s.evaluator for s in scores})
    units = sorted({(s.item, s.unit) for s in scores})
    if len(evaluators) < 2 or not units:
        return None, 0
    col = {u: j for j, u in enumerate(units)}
    row = {e: i for i, e in enumerate(evaluators)}
    data = np.full((len(evaluators), len(units)), np.nan)
    for s in scores:
        data[row[s.evaluator], col[s.item, s.unit]] = s.score
    paired = int(np.sum(np.sum(~np.isnan(data), axis=0) >= 2))
    if paired == 0 or len(np.unique(data[~np.isnan(data)])) < 2:
        return None, paired  # no unit scored twice, or one value throughout: α is not defined
    alpha = float(krippendorff.alpha(reliability_data=data, level_of_measurement="interval"))
    return (alpha if math.isfinite(alpha) else None), paired


def pair_kappas(scores: Sequence[ScoreRow]) -> tuple[PairKappa, ...]:
    """Linearly weighted Cohen's κ for every pair of evaluators, on the units both scored."""
    from sklearn.metrics import cohen_kappa_score

    by: dict[str, dict[tuple[str, str], int]] = {}
    for s in scores:
        by.setdefault(s.evaluator, {})[s.item, s.unit] = round(s.score * 10)
    out = []
    for a, b in itertools.combinations(sorted(by), 2):
        common = sorted(set(by[a]) & set(by[b]))
        kappa: float | None = None
        if common:
            ya, yb = [by[a][u] for u in common], [by[b][u] for u in common]
            with warnings.catch_warnings():  # one level used by both: κ is 0/0 (None here); scikit-learn warns
                warnings.simplefilter("ignore")
                k = float(cohen_kappa_score(ya, yb, labels=list(LEVELS), weights="linear"))
            kappa = k if math.isfinite(k) else None
        out.append(PairKappa((a, b), len(common), kappa))
    return tuple(out)


def agreement(scores: Sequence[ScoreRow]) -> Agreement:
    """Krippendorff's α (interval) and pairwise Cohen's κ of all scores (see the module docstring)."""
    alpha, units = krippendorff_interval(scores)
    return Agreement(alpha, pair_kappas(scores), units)
