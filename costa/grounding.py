"""How a grounder turns its candidates into a verified choice: size, position and ordinal words choose among the
candidates, a count is compared with how many there are, and the `Verification` record says what was verified.

Candidates are described by their pixel box (x, y, w, h) and area in pixels, so the same rules serve masks (the
colour grounder) and boxes (faces, people). Pure: numbers in, indices and records out.

Example:
    >>> from costa.targets import parse_target
    >>> cands = [(0, 0, 10, 10, 100), (50, 0, 20, 20, 400), (100, 0, 10, 10, 100)]
    >>> choose(cands, parse_target("the bigger ball"))[0], choose(cands, parse_target("the ball on the right"))[0]
    ([1], [2])
    >>> choose(cands, parse_target("the second ball"))[0], choose(cands, parse_target("the last ball"))[0]
    ([1], [2])
"""

from __future__ import annotations

from collections.abc import Sequence

from costa.targets import Evidence, TargetPhrase, Verification, parse_target
from costa.types import Box, EditState

#: (x, y, w, h, area_px) of one candidate.
Candidate = tuple[int, int, int, int, int]


def _centre(c: Candidate) -> tuple[float, float]:
    return c[0] + c[2] / 2.0, c[1] + c[3] / 2.0


def choose(
    candidates: Sequence[Candidate], phrase: TargetPhrase, keep_share: float = 0.5, image_size: tuple[int, int] = (0, 0)
) -> tuple[list[int], list[Evidence]]:
    """Indices of the candidates the phrase picks, and the evidence of how they were picked.

    Without a size, position or ordinal word every candidate at least `keep_share` of the largest's area is kept
    (several red cars); a size word keeps the largest or smallest, a position word the leftmost, rightmost, topmost,
    bottommost or the one nearest the centre (`image_size` = (width, height); without it, of the candidates' extent),
    an ordinal the n-th from the left (from the top when the position word is top or bottom). A count keeps that many
    of the largest.
    """
    if not candidates:
        return [], []
    order = sorted(range(len(candidates)), key=lambda i: -candidates[i][4])
    evidence: list[Evidence] = []
    n = len(candidates)
    if phrase.ordinal is not None:
        vertical = phrase.position in ("top", "bottom")
        axis = 1 if vertical else 0
        along = sorted(range(n), key=lambda i: _centre(candidates[i])[axis])
        if phrase.position in ("right", "bottom"):
            along.reverse()
        k = phrase.ordinal - 1 if phrase.ordinal > 0 else n - 1
        if k >= n:
            return [], [Evidence("ordinal", str(phrase.ordinal), f"only {n} candidate(s)")]
        word = {1: "first", 2: "second", 3: "third", -1: "last"}.get(phrase.ordinal, f"#{phrase.ordinal}")
        side = phrase.position or "left"
        evidence.append(Evidence("ordinal", word, f"chosen from the {side} among {n} candidates"))
        return [along[k]], evidence
    if phrase.position is not None:
        if phrase.position == "centre":
            if image_size[0] > 0:
                cx, cy = image_size[0] / 2.0, image_size[1] / 2.0
            else:
                cs = [_centre(c) for c in candidates]
                cx, cy = sum(c[0] for c in cs) / n, sum(c[1] for c in cs) / n
            pick = min(
                range(n), key=lambda i: (_centre(candidates[i])[0] - cx) ** 2 + (_centre(candidates[i])[1] - cy) ** 2
            )
        else:
            axis = 0 if phrase.position in ("left", "right") else 1
            sign = 1 if phrase.position in ("left", "top") else -1
            pick = min(range(n), key=lambda i: sign * _centre(candidates[i])[axis])
        evidence.append(Evidence("position", phrase.position, f"chosen among {n} candidates"))
        return [pick], evidence
    if phrase.size is not None:
        pick = order[0] if phrase.size == "largest" else order[-1]
        evidence.append(Evidence("size", phrase.size, f"chosen among {n} candidates"))
        return [pick], evidence
    if phrase.count is not None:
        return order[: phrase.count], evidence
    largest = candidates[order[0]][4]
    return [i for i in order if candidates[i][4] >= keep_share * largest], evidence


def count_evidence(phrase: TargetPhrase, found: int) -> tuple[list[Evidence], list[Evidence]]:
    """(verified, missing) evidence for the phrase's count: "the four women" with 2 found is missing."""
    if phrase.count is None:
        return [], []
    if found == phrase.count:
        return [Evidence("count", str(phrase.count), f"{found} found")], []
    return [], [Evidence("count", str(phrase.count), f"{found} found")]


def detector_verification(
    tool: str, phrase: TargetPhrase, class_name: str, found: int, chosen: list[Evidence], pointed: bool = False
) -> Verification:
    """The record for a class detector (faces, people): the class verified, the count compared, a colour or a
    qualifier that would have to choose among several detections reported as not verified."""
    verified = [Evidence("class", class_name, f"{tool} detector"), *chosen]
    missing: list[Evidence] = []
    unchecked: list[Evidence] = []
    v_count, m_count = count_evidence(phrase, found)
    verified += v_count
    missing += m_count
    if pointed:
        verified.append(Evidence("pointed", "user region", "inside what the user pointed at"))
    for aspect, value in (("colour", phrase.colour), ("qualifier", phrase.qualifier)):
        if not value:
            continue
        if found > 1 and not chosen and not pointed and phrase.count is None:
            missing.append(Evidence(aspect, value, f"{found} candidates and nothing checked which one is meant"))  # type: ignore[arg-type]
        else:
            unchecked.append(Evidence(aspect, value))  # type: ignore[arg-type]
    return Verification(tool, phrase.text, tuple(verified), tuple(missing), tuple(unchecked))


def verified_boxes(
    tool: str, class_name: str, boxes: Sequence[Box], target: str | None, state: EditState | None = None
) -> tuple[Box, ...]:
    """A detector's boxes narrowed by the target's size, position or ordinal words, each carrying the detector's
    `Verification` (class verified, count compared with all detections)."""
    from dataclasses import replace

    phrase = parse_target(target)
    cands = [(b.x, b.y, b.w, b.h, b.w * b.h) for b in boxes]
    size = (state.width, state.height) if state is not None else (0, 0)
    picked, chosen = choose(cands, phrase, keep_share=0.0, image_size=size)
    record = detector_verification(tool, phrase, class_name, len(boxes), chosen)
    return tuple(replace(boxes[i], verification=record) for i in sorted(picked))


def pointed(method: str, target: str | None) -> Verification:
    """The record for a region the user pointed at (clicks, a box, a brush): the user vouches for what it is."""
    return Verification(method, (target or "").strip(), (Evidence("pointed", "user region", "the user pointed at it"),))
