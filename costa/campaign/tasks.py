"""Task sets for evaluation campaigns: a JSON or YAML file of tasks, each an image and one or more turns.

The file (paths relative to the file's own folder)::

    {"tasks": [{"id": "40", "image": "inputs/40.jpeg", "category": "object edits",
                "turns": ["Segment the dog, detect the person, recolor the leaves to red, and expand the image",
                          {"instruction": "make it brighter", "box": "10,20,200,100", "points": [[40, 50]],
                           "brush": "masks/40_1.png", "target": "targets/40_2.png"}]}]}

A turn is an instruction, or an object with the instruction and optional pointing (`box` "x,y,w,h" or [x, y, w, h];
`points` [[x, y], [x, y, "neg"] …]; `brush`, a mask image of the image's size) and an optional `target` (a reference
result made by people, e.g. MagicBrush's, shown to evaluators beside costa's). Per-turn `box` / `points` / `brush`
may instead be given on the task as lists with one entry per turn (null for none). Everything is checked when the
file is read, and a mistake names the file, the task and the value (`InputError`); nothing is half-read.

Example:
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> d = Path(tempfile.mkdtemp()); (d / "a.png").write_bytes(b"")
    0
    >>> _ = (d / "set.json").write_text(json.dumps({"tasks": [{"id": "t1", "image": "a.png", "turns": ["blur"]}]}))
    >>> ts = load_task_set(d / "set.json")
    >>> ts.tasks[0].turns[0].instruction, ts.tasks[0].image == d / "a.png"
    ('blur', True)
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from costa.errors import InputError

#: Keys a task may have, and a turn object.
TASK_KEYS = frozenset({"id", "image", "turns", "category", "source", "box", "points", "brush", "target"})
TURN_KEYS = frozenset({"instruction", "box", "points", "brush", "target"})
NEGATIVE = frozenset({"neg", "negative", "bg", "background", "false", "0"})
POSITIVE = frozenset({"pos", "positive", "fg", "true", "1"})


@dataclass(frozen=True)
class Point:
    """A click in image pixels: on the target (`positive`) or on background."""

    x: int
    y: int
    positive: bool = True


@dataclass(frozen=True)
class TurnSpec:
    """One instruction of a task and how the user pointed for it (all optional)."""

    instruction: str
    box: str = ""  # "x,y,w,h" in pixels, as `costa edit --box`
    points: tuple[Point, ...] = ()
    brush: Path | None = None  # mask image of the image's size (white = the region)
    target: Path | None = None  # a reference result made by people (shown to evaluators, never to costa)

    @property
    def pointing(self) -> str:
        """How the user pointed: "brush", "box", "click" or "none" (the calibration's `StepContext.pointing`)."""
        if self.brush is not None:
            return "brush"
        if self.box:
            return "box"
        return "click" if self.points else "none"


@dataclass(frozen=True)
class Task:
    """One task: an image and its turns, in order (a multi-turn session)."""

    id: str
    image: Path
    turns: tuple[TurnSpec, ...]
    category: str = ""
    source: str = ""  # where it came from (e.g. "EditEval_v1 object_addition/1.jpg")


@dataclass(frozen=True)
class TaskSet:
    """The tasks of a file, in file order; `path` is the file (None for an imported set not yet written)."""

    tasks: tuple[Task, ...]
    path: Path | None = None
    notes: tuple[str, ...] = field(default=())  # what an importer left out and why

    def by_id(self, task_id: str) -> Task:
        for t in self.tasks:
            if t.id == task_id:
                return t
        raise InputError(f"no task {task_id!r} in the task set")

    def to_dict(self, base: Path | None = None) -> dict[str, Any]:
        """The set as the file format; paths relative to `base` (the folder the file will be in) when given."""
        return {"tasks": [task_to_dict(t, base) for t in self.tasks]}


def _rel(path: Path | None, base: Path | None) -> str | None:
    if path is None:
        return None
    return os.path.relpath(path, base) if base is not None else str(path)


def task_to_dict(task: Task, base: Path | None = None) -> dict[str, Any]:
    """One task as the file format (turn objects only where a turn has pointing or a target)."""
    turns: list[Any] = []
    for t in task.turns:
        extra: dict[str, Any] = {}
        if t.box:
            extra["box"] = t.box
        if t.points:
            extra["points"] = [[p.x, p.y] if p.positive else [p.x, p.y, "neg"] for p in t.points]
        if t.brush is not None:
            extra["brush"] = _rel(t.brush, base)
        if t.target is not None:
            extra["target"] = _rel(t.target, base)
        turns.append({"instruction": t.instruction, **extra} if extra else t.instruction)
    out: dict[str, Any] = {"id": task.id, "image": _rel(task.image, base), "turns": turns}
    if task.category:
        out["category"] = task.category
    if task.source:
        out["source"] = task.source
    return out


def write_task_set(task_set: TaskSet, path: Path) -> Path:
    """Write `task_set` to `path` (.json, .yaml or .yml) with paths relative to its folder; return the path."""
    path = Path(path)
    data = task_set.to_dict(path.resolve().parent)
    if path.suffix.lower() in (".yaml", ".yml"):
        import yaml

        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120)
    elif path.suffix.lower() == ".json":
        text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    else:
        raise InputError(f"task set file {path} must end in .json, .yaml or .yml")
    path.write_text(text, encoding="utf-8")
    return path


def load_task_set(path: str | Path) -> TaskSet:
    """Read and check a task-set file (JSON or YAML by suffix).

    Raises:
        InputError: the file is missing or unreadable, or a task is malformed (the message names file, task, value).
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(f"task set {p} does not exist")
    try:
        text = p.read_text(encoding="utf-8")
        if p.suffix.lower() in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError) as e:  # yaml.YAMLError and JSONDecodeError are ValueErrors
        raise InputError(f"task set {p} is not readable {p.suffix.lstrip('.') or 'JSON'}: {e}") from e
    except Exception as e:  # yaml's own error classes
        raise InputError(f"task set {p} is not readable YAML: {e}") from e
    return parse_task_set(data, p)


def parse_task_set(data: Any, path: Path, check_files: bool = True) -> TaskSet:
    """Check the parsed file content `data` of `path` (paths in it are relative to `path`'s folder); with
    `check_files` False the files are not looked for (a stored campaign's set: its report needs no image)."""
    if not isinstance(data, Mapping) or not isinstance(data.get("tasks"), list) or not data["tasks"]:
        raise InputError(f'task set {path}: expected {{"tasks": [ … ]}} with at least one task')
    base = path.resolve().parent
    tasks: list[Task] = []
    seen: set[str] = set()
    for i, raw in enumerate(data["tasks"], 1):
        task = _parse_task(raw, base, f"task set {path}, task {i}", check_files)
        if task.id in seen:
            raise InputError(f"task set {path}, task {i}: id {task.id!r} is used twice")
        seen.add(task.id)
        tasks.append(task)
    return TaskSet(tuple(tasks), path)


def _parse_task(raw: Any, base: Path, where: str, check_files: bool = True) -> Task:
    if not isinstance(raw, Mapping):
        raise InputError(f"{where}: expected an object with id, image and turns, got {raw!r:.60}")
    unknown = sorted(set(raw) - TASK_KEYS)
    if unknown:
        raise InputError(f"{where}: unknown key(s) {unknown}; a task has {sorted(TASK_KEYS)}")
    tid = raw.get("id")
    if isinstance(tid, int) and not isinstance(tid, bool):
        tid = str(tid)
    if not isinstance(tid, str) or not tid.strip():
        raise InputError(f"{where}: id must be a non-empty string, got {tid!r}")
    where = f"{where} ({tid!r})"
    image = _file(raw.get("image"), base, f"{where}: image", check_files)
    turns_raw = raw.get("turns")
    if isinstance(turns_raw, str):
        turns_raw = [turns_raw]
    if not isinstance(turns_raw, list) or not turns_raw:
        raise InputError(f"{where}: turns must be a non-empty list of instructions, got {turns_raw!r:.60}")
    per_turn = {k: _per_turn_list(raw.get(k), len(turns_raw), f"{where}: {k}") for k in ("box", "points", "brush")}
    turns = []
    for j, t in enumerate(turns_raw):
        extra = {k: v[j] for k, v in per_turn.items() if v is not None and v[j] is not None}
        turns.append(_parse_turn(t, extra, base, f"{where}, turn {j + 1}", check_files))
    category, source = raw.get("category", ""), raw.get("source", "")
    for name, value in (("category", category), ("source", source)):
        if not isinstance(value, str):
            raise InputError(f"{where}: {name} must be a string, got {value!r}")
    return Task(tid.strip(), image, tuple(turns), category.strip(), source.strip())


def _per_turn_list(value: Any, n: int, where: str) -> list[Any] | None:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != n:
        raise InputError(f"{where} on a task must be a list with one entry per turn ({n}), got {value!r:.60}")
    return value


def _parse_turn(raw: Any, extra: Mapping[str, Any], base: Path, where: str, check_files: bool = True) -> TurnSpec:
    if isinstance(raw, str):
        raw = {"instruction": raw}
    if not isinstance(raw, Mapping):
        raise InputError(f"{where}: expected an instruction or an object with one, got {raw!r:.60}")
    unknown = sorted(set(raw) - TURN_KEYS)
    if unknown:
        raise InputError(f"{where}: unknown key(s) {unknown}; a turn has {sorted(TURN_KEYS)}")
    both = sorted(k for k in extra if k in raw)
    if both:
        raise InputError(f"{where}: {both[0]} is given both on the task and on the turn")
    raw = {**raw, **extra}
    text = raw.get("instruction")
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{where}: the instruction must be non-empty text, got {text!r}")
    brush = _file(raw["brush"], base, f"{where}: brush", check_files) if raw.get("brush") is not None else None
    target = _file(raw["target"], base, f"{where}: target", check_files) if raw.get("target") is not None else None
    return TurnSpec(text.strip(), _box(raw.get("box"), where), _points(raw.get("points"), where), brush, target)


def _file(value: Any, base: Path, where: str, check: bool = True) -> Path:
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{where} must be a file path, got {value!r}")
    p = Path(value)
    p = (p if p.is_absolute() else base / p).resolve()
    if check and not p.is_file():
        raise InputError(f"{where} {value!r} does not exist (looked for {p})")
    return p


def _box(value: Any, where: str) -> str:
    if value is None or value == "":
        return ""
    parts: Sequence[Any]
    if isinstance(value, str):
        parts = [v.strip() for v in value.split(",")]
    elif isinstance(value, list | tuple):
        parts = value
    else:
        parts = ()
    try:
        nums = [int(float(v)) for v in parts]
    except (TypeError, ValueError, OverflowError):
        nums = []
    if len(nums) != 4 or nums[2] <= 0 or nums[3] <= 0 or min(nums[:2]) < 0:
        raise InputError(f"{where}: box must be x,y,w,h in pixels (w, h > 0), got {value!r}")
    return ",".join(str(n) for n in nums)


def _points(value: Any, where: str) -> tuple[Point, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InputError(f'{where}: points must be a list like [[x, y], [x, y, "neg"]], got {value!r:.60}')
    out = []
    for p in value:
        ok = isinstance(p, list | tuple) and len(p) in (2, 3)
        flag = str(p[2]).strip().lower() if ok and len(p) == 3 else "pos"
        try:
            x, y = (int(float(v)) for v in p[:2]) if ok else (-1, -1)
        except (TypeError, ValueError, OverflowError):
            x, y = -1, -1
        if x < 0 or y < 0 or flag not in NEGATIVE | POSITIVE:
            raise InputError(f'{where}: a point must be [x, y] or [x, y, "neg"] in pixels, got {p!r}')
        out.append(Point(x, y, flag in POSITIVE))
    return tuple(out)
