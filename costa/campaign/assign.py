"""Who scores what: each item to K evaluators, balanced over evaluators and over conditions, in a random order per
evaluator (pure, seeded).

Items are dealt one at a time (in a seeded shuffled order) to the K evaluators with the fewest items of that item's
condition so far, then the fewest items overall, then the fewest items shared with the evaluators already chosen for
it (so every pair shares items and the pairwise agreement can be measured), ties broken at random. Each evaluator's
queue is then shuffled with a seed of its own, so no two evaluators see the conditions in the same order.

Example:
    >>> queues = assign([("i1", "a"), ("i2", "a"), ("i3", "b"), ("i4", "b")], ["ann", "bob"], 1, seed="x")
    >>> sorted(len(q) for q in queues.values()), sorted(i for q in queues.values() for i in q)
    ([2, 2], ['i1', 'i2', 'i3', 'i4'])
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

from costa.errors import InputError


def check_evaluators(evaluators: Sequence[str], overlap: int) -> tuple[str, ...]:
    """Evaluator names stripped and checked against the overlap K.

    Raises:
        InputError: an empty or repeated name, or K outside 1 … the number of evaluators.
    """
    names = tuple(e.strip() for e in evaluators)
    if any(not n for n in names):
        raise InputError("an evaluator name is empty: give names like --evaluators ann,bob")
    dupes = sorted(n for n, c in Counter(names).items() if c > 1)
    if dupes:
        raise InputError(f"evaluator {dupes[0]!r} is listed twice")
    if names and not 1 <= overlap <= len(names):
        raise InputError(f"--overlap {overlap}: each item can be scored by 1 … {len(names)} of the named evaluators")
    if not names and overlap < 1:
        raise InputError(f"--overlap must be at least 1, got {overlap}")
    return names


def assign(
    items: Sequence[tuple[str, str]], evaluators: Sequence[str], overlap: int, seed: str
) -> dict[str, list[str]]:
    """Each evaluator's queue of item ids, in the order they will see them.

    Args:
        items: (item id, condition label) pairs.
        evaluators: names (checked by `check_evaluators`).
        overlap: K, how many evaluators score each item.
        seed: makes the dealing and the orders reproducible (the campaign's name).
    """
    names = check_evaluators(evaluators, overlap)
    queues: dict[str, list[str]] = {n: [] for n in names}
    if not names:
        return queues
    rng = random.Random(f"{seed}:deal")
    order = list(items)
    rng.shuffle(order)
    per_condition: Counter[tuple[str, str]] = Counter()
    total: Counter[str] = Counter()
    shared: Counter[frozenset[str]] = Counter()
    for item, condition in order:
        chosen: list[str] = []
        for _ in range(overlap):
            candidates = [n for n in names if n not in chosen]
            rng.shuffle(candidates)  # the random tie-break
            best = min(
                candidates,
                key=lambda n: (per_condition[n, condition], total[n], sum(shared[frozenset((n, c))] for c in chosen)),
            )
            chosen.append(best)
        for i, a in enumerate(chosen):
            per_condition[a, condition] += 1
            total[a] += 1
            queues[a].append(item)
            for b in chosen[i + 1 :]:
                shared[frozenset((a, b))] += 1
    for n in names:
        random.Random(f"{seed}:order:{n}").shuffle(queues[n])
    return queues
