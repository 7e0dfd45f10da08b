"""Task sets from the third-party benchmark formats (the folders of ../shared/benchmarks and their upstream layouts).

- `costa`: CoSTA*/FaSTA*'s samples, `inputs/<n>.jpeg` with `prompts/<n>.txt` (an image without a prompt is left
  out, with a note: task 34 has none).
- `magicbrush`: `turns.json` (+ `sessions.json`), one task per image id whose turns are its consecutive turns, each
  with MagicBrush's human-made target image as the turn's reference.
- `editeval`: EditEval_v1's `prompts.json`: one single-turn task per available photo, its category kept.
- `mteditbench`: IMAGAgent's `mteditbench_instructions.json` (turn lists, no images: they were never released),
  paired with the user's own images, `<images>/<task_id>.<png|jpg|jpeg|webp>`; a list with no image is left out.

`limit` keeps that many tasks, taken in turn from each category (so 20 EditEval photos cover all seven categories).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from costa.campaign.tasks import Task, TaskSet, TurnSpec
from costa.errors import InputError

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")


def _read_json(path: Path) -> Any:
    if not path.is_file():
        raise InputError(f"{path} does not exist: is this the right folder for this format?")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise InputError(f"{path} is not readable JSON: {e}") from e


def from_costa(source: Path, images: Path | None = None) -> TaskSet:
    """CoSTA* samples: every `inputs/<n>.<ext>` with a `prompts/<n>.txt`."""
    inputs, prompts = source / "inputs", source / "prompts"
    if not inputs.is_dir() or not prompts.is_dir():
        raise InputError(f"{source} has no inputs/ and prompts/ folders (the CoSTA* sample layout)")
    tasks, notes = [], []
    for img in sorted(p for p in inputs.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES and p.stem.isdigit()):
        prompt = prompts / f"{img.stem}.txt"
        if not prompt.is_file():
            notes.append(f"CoSTA* task {img.stem}: no prompt (prompts/{img.stem}.txt), left out")
            continue
        text = prompt.read_text(encoding="utf-8").strip()
        tasks.append(Task(f"costa-{img.stem}", img, (TurnSpec(text),), "CoSTA*", f"CoSTA* {img.name}"))
    tasks.sort(key=lambda t: int(t.id.split("-")[1]))
    return TaskSet(tuple(tasks), None, tuple(notes))


def from_magicbrush(source: Path, images: Path | None = None) -> TaskSet:
    """MagicBrush: one task per image id, its consecutive turns, each turn's human-made target as reference."""
    rows = _read_json(source / "turns.json")
    by_image: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_image.setdefault(str(r["img_id"]), []).append(r)
    tasks, notes = [], []
    for img_id, turns in sorted(by_image.items(), key=lambda kv: int(kv[0]) if kv[0].isdigit() else 0):
        turns.sort(key=lambda r: int(r["turn_index"]))
        first = turns[0]
        chain = [first]
        for r in turns[1:]:  # a gap in the turn numbers breaks the chain: the next source is not our result
            if int(r["turn_index"]) != int(chain[-1]["turn_index"]) + 1:
                notes.append(f"MagicBrush {img_id}: turn {r['turn_index']} does not follow turn "
                             f"{chain[-1]['turn_index']}, left out")  # fmt: skip
                continue
            chain.append(r)
        specs = tuple(TurnSpec(str(r["instruction"]).strip(), target=source / r["target_image"]) for r in chain)
        start = int(first["turn_index"])
        label = f"MagicBrush {img_id} turns {start}–{chain[-1]['turn_index']}"
        tasks.append(Task(f"mb-{img_id}", source / first["source_image"], specs, "MagicBrush", label))
    return TaskSet(tuple(tasks), None, tuple(notes))


def from_editeval(source: Path, images: Path | None = None) -> TaskSet:
    """EditEval_v1: one single-turn task per available photo (missing originals are noted and left out)."""
    rows = _read_json(source / "prompts.json")
    tasks, notes = [], []
    for r in rows:
        if not r.get("available") or not r.get("image"):
            notes.append(f"EditEval {r['id']}: photo not in this copy, left out")
            continue
        tid = "ee-" + str(r["id"]).rsplit(".", 1)[0].replace("/", "-")
        spec = TurnSpec(str(r["instruction"]).strip())
        tasks.append(Task(tid, source / r["image"], (spec,), str(r["category"]), f"EditEval_v1 {r['id']}"))
    return TaskSet(tuple(tasks), None, tuple(notes))


def from_mteditbench(source: Path, images: Path | None = None) -> TaskSet:
    """MTEditBench turn lists paired with the user's images `<images>/<task_id>.<ext>` (none were released)."""
    path = source / "mteditbench_instructions.json" if source.is_dir() else source
    rows = _read_json(path)
    if images is None or not images.is_dir():
        raise InputError(
            "MTEditBench has no images (they were never released): give --images DIR with one image per task, "
            "named <task_id>.png (or .jpg, .jpeg, .webp)"
        )
    tasks, missing = [], 0
    for r in rows:
        tid = str(r["task_id"])
        found = next((images / f"{tid}{s}" for s in IMAGE_SUFFIXES if (images / f"{tid}{s}").is_file()), None)
        if found is None:
            missing += 1
            continue
        specs = tuple(TurnSpec(str(t).strip()) for t in r["turns"] if str(t).strip())
        tasks.append(Task(f"mte-{tid}", found, specs, "MTEditBench", f"MTEditBench {r.get('source', tid)}"))
    notes = (f"MTEditBench: {missing} turn list(s) have no image in {images}, left out",) if missing else ()
    if not tasks:
        raise InputError(f"no MTEditBench task has an image in {images} (expected files named <task_id>.png)")
    return TaskSet(tuple(tasks), None, notes)


#: Format name → importer(source folder, images folder or None).
IMPORTERS: dict[str, Callable[[Path, Path | None], TaskSet]] = {
    "costa": from_costa,
    "magicbrush": from_magicbrush,
    "editeval": from_editeval,
    "mteditbench": from_mteditbench,
}


def spread(tasks: Sequence[Task], limit: int) -> tuple[Task, ...]:
    """`limit` tasks taken in turn from each category (in first-seen order), keeping file order within a category.

    >>> from pathlib import Path
    >>> ts = [Task(f"{c}{i}", Path("x"), (), c) for c in "ab" for i in range(3)]
    >>> [t.id for t in spread(ts, 4)]
    ['a0', 'b0', 'a1', 'b1']
    """
    groups: dict[str, list[Task]] = {}
    for t in tasks:
        groups.setdefault(t.category, []).append(t)
    out: list[Task] = []
    depth = 0
    while len(out) < limit and any(depth < len(g) for g in groups.values()):
        out.extend(g[depth] for g in groups.values() if depth < len(g) and len(out) < limit)
        depth += 1
    return tuple(out)


def import_tasks(fmt: str, source: Path, images: Path | None = None, limit: int | None = None) -> TaskSet:
    """A task set from `source` in format `fmt` (see `IMPORTERS`), at most `limit` tasks spread over categories.

    Raises:
        InputError: unknown format, a missing folder or file, or no task found.
    """
    if fmt not in IMPORTERS:
        raise InputError(f"unknown task format {fmt!r}: use one of {', '.join(IMPORTERS)}")
    source = Path(source)
    if not source.exists():
        raise InputError(f"{source} does not exist")
    if limit is not None and limit < 1:
        raise InputError(f"--limit must be at least 1, got {limit}")
    ts = IMPORTERS[fmt](source, images)
    if not ts.tasks:
        raise InputError(f"no {fmt} task found in {source}")
    tasks = spread(ts.tasks, limit) if limit is not None else ts.tasks
    return TaskSet(tasks, None, ts.notes)
