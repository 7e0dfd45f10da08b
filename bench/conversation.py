"""Conversation benchmark: multi-turn follow-up sessions on real photos, run through the session core.

Suites: tests/data/conversation_suite_dev.yaml (used while building the conversation memory) and
conversation_suite_heldout.yaml (written with it, before any tuning, never tuned on). Each session is a real photo
(scikit-image's bundled photos; a sign with a word painted on it where text is edited), the object the first turn
points at (a box, as a click or a drag would give), and 3–6 turns; where a turn edits several things, `marks`
painted on the photo (a disc or a square of a named colour in a box, found by colour like any coloured object).
Every turn names the reference type it uses, what it must resolve to (a plan, a restore, a history command or a
question) and how its result is checked on pixels:

- `colour: NAME` — the object's median ΔE2000 to the colour fell by ≥ 5 (or is ≤ 20);
- `lighter` / `darker` — the object's mean L* moved ≥ 2 that way;
- `restored: K` — the object (or the sign: `region: sign`, or a box `region: [x, y, w, h]`) is as it was after
  turn K (0: the upload): mean ΔE2000 ≤ 2;
- `same: K` — the whole image is pixel for pixel the image after turn K (history commands);
- `ocr: WORD` — OCR reads WORD on the sign;  `asked` — a question came back and nothing changed;
- `region: marks` — the check holds on every mark's box ("them": each of them darker); `colour` may then list one
  colour per mark;
- and for every edit: at most 0.5 % of the pixels outside the object's box, the marks (each grown by 16 px) or the
  sign changed.

Every turn runs as if the person pressed Accept on a proposal (`accept_unverified`): where the real-photo calibration
has no evidence for a context a result is only proposed and nothing would be written, and what this benchmark measures
is how the follow-ups read and act on the image, not the calibration.

Reported: resolution accuracy per reference type (what the turn was read as, against the expected reading, on the
memory the earlier real turns left) and end-to-end pass (read right and checked right), per part. `--long` runs
100-turn sessions of mixed edits, undos and changes back and reports the pixels changed outside every edit region
(goal 0), the drift of regions that were restored (ΔE2000, goal ≤ 2) and turns that failed late after the same
edit passed early.
"""

from __future__ import annotations

import argparse
import collections
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

SUITES_DIR = Path(__file__).resolve().parents[1] / "tests" / "data"
PARTS = (("dev", "conversation_suite_dev.yaml"), ("held-out", "conversation_suite_heldout.yaml"))
_FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")
MAX_SIDE = 256  # photos are shrunk to this long side: the benchmark runs on a shared 2-core CPU


# ------------------------------------------------------------------------------------------------------ scenes


@dataclass(frozen=True)
class Scene:
    """A real photo, the object the first turn points at, the sign painted on it (when text is edited) and the boxes
    of the marks painted on it (when a turn edits several things)."""

    image: np.ndarray
    box: tuple[int, int, int, int] | None
    sign: tuple[int, int, int, int] | None
    marks: tuple[tuple[int, int, int, int], ...] = ()


def load_photo(name: str) -> np.ndarray:
    """A scikit-image bundled photo ("coffee", "chelsea", "astronaut", "rocket"), RGB, long side `MAX_SIDE`."""
    import skimage.data
    from PIL import Image

    img = getattr(skimage.data, name)()
    if img.ndim == 2:
        img = np.stack([img] * 3, axis=-1)
    pil = Image.fromarray(np.ascontiguousarray(img[..., :3]))
    pil.thumbnail((MAX_SIDE, MAX_SIDE))
    return np.asarray(pil.convert("RGB")).copy()


def paint_sign(image: np.ndarray, word: str, at: Sequence[int]) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    """A light panel with `word` in dark bold letters painted on the photo at (x, y); returns the image and its box."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(str(_FONT), 22)
    pil = Image.fromarray(image)
    draw = ImageDraw.Draw(pil)
    left, top, right, bottom = draw.textbbox((0, 0), word, font=font)
    x, y = int(at[0]), int(at[1])
    w, h = int(right - left) + 20, int(bottom - top) + 16
    draw.rectangle((x, y, x + w, y + h), fill=(236, 232, 220))
    draw.text((x + 10 - left, y + 8 - top), word, font=font, fill=(30, 30, 40))
    return np.asarray(pil).copy(), (x, y, w, h)


def paint_mark(image: np.ndarray, mark: dict[str, Any]) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    """A flat `disc` (the ellipse in the box) or `square` (the box) of a named colour painted on the photo."""
    from PIL import Image, ImageDraw

    from costa.colours import parse_colour

    x, y, w, h = (int(v) for v in mark["box"])
    if mark["shape"] not in ("disc", "square"):
        raise ValueError(f"a mark's shape is 'disc' or 'square', got {mark['shape']!r}")
    rgb = parse_colour(mark["colour"])
    if rgb is None:
        raise ValueError(f"a mark's colour must be a colour name, got {mark['colour']!r}")
    pil = Image.fromarray(image)
    draw = ImageDraw.Draw(pil)
    fill = (int(rgb[0]), int(rgb[1]), int(rgb[2]))
    (draw.ellipse if mark["shape"] == "disc" else draw.rectangle)((x, y, x + w - 1, y + h - 1), fill=fill)
    return np.asarray(pil).copy(), (x, y, w, h)


def make_scene(setup: dict[str, Any]) -> Scene:
    image = load_photo(setup["photo"])
    sign = None
    if "sign" in setup:
        image, sign = paint_sign(image, setup["sign"]["text"], setup["sign"]["at"])
    marks = []
    for mark in setup.get("marks", ()):
        image, at = paint_mark(image, mark)
        marks.append(at)
    box: tuple[int, int, int, int] | None = None
    if "box" in setup:
        x, y, w, h = (int(v) for v in setup["box"])
        box = (x, y, w, h)
    return Scene(image, box, sign, tuple(marks))


# ------------------------------------------------------------------------------------------------------ checks


def _lab(image: np.ndarray, mask: np.ndarray) -> np.ndarray:
    from skimage.color import rgb2lab

    return rgb2lab(image[mask].reshape(-1, 1, 3).astype(np.float64) / 255.0).reshape(-1, 3)


def delta_e(a: np.ndarray, b: np.ndarray, mask: np.ndarray) -> float:
    """Mean ΔE2000 between two images over `mask`."""
    from skimage.color import deltaE_ciede2000

    if not mask.any():
        return 0.0
    return float(deltaE_ciede2000(_lab(a, mask), _lab(b, mask)).mean())


def _box_mask(shape: tuple[int, ...], box: Sequence[int] | None, grow: int = 0) -> np.ndarray:
    m = np.zeros(shape[:2], bool)
    if box is None:
        return m
    x, y, w, h = box
    m[max(0, y - grow) : y + h + grow, max(0, x - grow) : x + w + grow] = True
    return m


def check_turn(check: dict[str, Any], scene: Scene, images: list[np.ndarray], now: np.ndarray, asked: bool) -> str:
    """'' when the turn's result is right on pixels / OCR, else why not."""
    if check.get("region") == "marks":
        return _check_marks(check, scene, images, now, asked)
    before = images[-1]
    use_sign = check.get("region") == "sign" or scene.box is None
    region = _box_mask(now.shape, scene.sign if use_sign else scene.box)
    if "asked" in check:
        return "" if asked and np.array_equal(now, before) else "no question asked, or the image changed"
    if "same" in check:
        want = images[int(check["same"])]
        return (
            "" if want.shape == now.shape and np.array_equal(want, now) else f"not the image after turn {check['same']}"
        )
    if now.shape != before.shape:
        return f"the image size changed {before.shape} → {now.shape}"
    outside = ~(_box_mask(now.shape, scene.box, 16) | _box_mask(now.shape, scene.sign, 16))
    for mark in scene.marks:
        outside &= ~_box_mask(now.shape, mark, 16)
    changed_out = float((np.abs(now.astype(int) - before.astype(int)).max(axis=2) > 2)[outside].mean())
    if changed_out > 0.005:
        return f"{100 * changed_out:.1f} % of the pixels outside the edit changed"
    if "restored" in check:
        if not region.any():
            return "no region to compare (a bug in the suite)"
        de = delta_e(images[int(check["restored"])], now, region)
        return "" if de <= 2.0 else f"not restored: mean ΔE2000 {de:.1f} to the image after turn {check['restored']}"
    if "colour" in check:
        from costa.colours import parse_colour

        rgb = np.array(parse_colour(check["colour"]), np.uint8)
        flat = np.broadcast_to(rgb, now.shape).copy()
        was, got = delta_e(before, flat, region), delta_e(now, flat, region)
        return "" if got <= 20 or got <= was - 5 else f"ΔE2000 to {check['colour']} {was:.1f} → {got:.1f}"
    if "lighter" in check or "darker" in check:
        way = 1 if "lighter" in check else -1
        moved = (_lab(now, region)[:, 0].mean() - _lab(before, region)[:, 0].mean()) * way
        return "" if moved >= 2 else f"L* moved {moved:+.1f} the asked way"
    if "ocr" in check:
        return _ocr_check(now, scene, str(check["ocr"]))
    return ""


def _check_marks(check: dict[str, Any], scene: Scene, images: list[np.ndarray], now: np.ndarray, asked: bool) -> str:
    """`check` on every mark's box in turn (a list of colours: one per mark); the misses, named by mark."""
    if not scene.marks:
        return "no marks to check (a bug in the suite)"
    colours = check.get("colour")
    misses = []
    for i, mark in enumerate(scene.marks):
        one = {k: v for k, v in check.items() if k != "region"}
        if isinstance(colours, list):
            one["colour"] = colours[i]
        miss = check_turn(one, Scene(scene.image, mark, scene.sign, scene.marks), images, now, asked)
        if miss:
            misses.append(f"mark {i + 1}: {miss}")
    return "; ".join(misses)


def _ocr_check(image: np.ndarray, scene: Scene, word: str) -> str:
    from costa.tools.ocr import RapidOcrReader

    x, y, w, h = scene.sign or (0, 0, image.shape[1], image.shape[0])
    crop = image[max(0, y - 12) : y + h + 12, max(0, x - 40) : x + w + 40]
    read = " ".join(r.text for r in RapidOcrReader().read(crop))
    return "" if word.lower() in read.lower().replace(" ", "") else f"OCR reads {read!r}, not {word!r}"


# --------------------------------------------------------------------------------------------------- resolution


def reading_of(core: Any, sid: str, text: str) -> tuple[str, ...]:
    """What the session reads `text` as now: ("command", op, n) / ("restore",) / ("question",) / the plan's
    (kind, target, result) triples, flattened."""
    from costa.errors import CostaError
    from costa.planner import plan_with_rules
    from costa.planner.suite import normalise
    from costa.session.conversation import parse_command, path_memory

    cmd = parse_command(text)
    if cmd is not None:
        return ("command", cmd.op, str(cmd.version if cmd.op == "branch" else cmd.count))
    r = path_memory(core.store, core.store.session(sid, None)).resolve(text)
    if r.question:
        return ("question",)
    if r.restore is not None:
        return ("restore",)
    try:
        plan = plan_with_rules(r.text)
    except CostaError:
        return ("question",)
    return tuple(x for s in plan.subtasks for x in (s.kind, normalise(s.target), normalise(s.result)))


def expected_reading(expect: Any) -> tuple[str, ...]:
    from costa.planner.suite import normalise

    if isinstance(expect, str):
        parts = expect.split()
        if parts[0] in ("undo", "redo", "start_over", "branch"):
            return ("command", parts[0], parts[1] if len(parts) > 1 else "1")
        return (parts[0],)
    return tuple(x for k, t, r in expect for x in (k, normalise(t), normalise(r)))


# ------------------------------------------------------------------------------------------------------ running


@dataclass
class PartResult:
    name: str
    sessions: int = 0
    turns: int = 0
    follow_ups: int = 0
    resolved: collections.Counter[str] = field(default_factory=collections.Counter)
    total: collections.Counter[str] = field(default_factory=collections.Counter)
    passed: int = 0
    misses: list[str] = field(default_factory=list)
    seconds: float = 0.0


def load_part(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    import yaml

    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    return doc["setups"], doc["sessions"]


def _core(home: Path) -> Any:
    from costa.config import Settings
    from costa.services import Services
    from costa.session import SessionCore
    from costa.store import Store

    settings = Settings.from_env()
    from dataclasses import replace

    settings = replace(settings, home=home)
    return SessionCore(Services(settings), Store(home / "store"))


def run_session(core: Any, scene: Scene, turns: list[dict[str, Any]], tmp: Path) -> Iterator[tuple[str, str, str]]:
    """Run one session; yield (reference type, miss or '' for the reading, miss or '' for the result) per turn."""
    from PIL import Image

    from costa.session.core import Pointing
    from costa.session.turns import TurnOptions

    path = tmp / "photo.png"
    Image.fromarray(scene.image).save(path)
    sid = core.new_session(None).id
    core.upload(sid, None, path)
    images = [scene.image]
    for k, turn in enumerate(turns):
        text = turn["say"]
        read = reading_of(core, sid, text) if k else ()
        want = expected_reading(turn["expect"]) if k else ()
        read_miss = "" if read == want else f"read as {read}, expected {want}"
        point = turn.get("point", scene.box if k == 0 else None)
        box = ",".join(str(v) for v in point) if point else ""
        opts = TurnOptions.validate(core.settings, accept_unverified=True)  # as a person accepting each proposal
        view = _last_view(core.run(core.prepare(sid, None, text, opts, Pointing(box=box))))
        _, now = core.head(sid, None)
        on = turn.get("check", {}).get("region")
        view_scene = (
            Scene(scene.image, (on[0], on[1], on[2], on[3]), scene.sign, scene.marks) if isinstance(on, list) else scene
        )
        result_miss = check_turn(turn.get("check", {}), view_scene, images, now, bool(view and view.question))
        images.append(now)
        yield turn.get("ref", "first"), read_miss, result_miss


def _last_view(steps: Iterator[tuple[Any, Any]]) -> Any:
    views = [view for view, _ in steps]
    return views[-1] if views else None


def run_part(name: str, path: Path, home: Path) -> PartResult:
    setups, sessions = load_part(path)
    res = PartResult(name)
    t0 = time.perf_counter()
    core = _core(home)
    try:
        for i, session in enumerate(sessions):
            scene = make_scene(setups[session["setup"]])
            res.sessions += 1
            ok = True
            tmp = home / f"s{i}"
            tmp.mkdir(parents=True, exist_ok=True)
            for k, (ref, read_miss, result_miss) in enumerate(run_session(core, scene, session["turns"], tmp)):
                turn = session["turns"][k]
                res.turns += 1
                if k:
                    res.follow_ups += 1
                    res.total[ref] += 1
                    res.resolved[ref] += read_miss == ""
                if read_miss or result_miss:
                    ok = False
                    res.misses.append(f"{session['id']} turn {k + 1} {turn['say']!r}: {read_miss or result_miss}")
            res.passed += ok
    finally:
        core.close()
    res.seconds = time.perf_counter() - t0
    return res


def format_part(r: PartResult) -> list[str]:
    lines = [
        f"{r.name}: {r.sessions} sessions, {r.turns} turns ({r.follow_ups} follow-ups), {r.seconds:.0f} s",
        f"  end-to-end pass (every turn read and checked right): {r.passed}/{r.sessions} sessions "
        f"({100 * r.passed / max(1, r.sessions):.0f} %)",
        f"  resolution accuracy: {sum(r.resolved.values())}/{sum(r.total.values())} follow-ups "
        f"({100 * sum(r.resolved.values()) / max(1, sum(r.total.values())):.0f} %)",
    ]
    for ref in sorted(r.total):
        lines.append(f"    {ref:18} {r.resolved[ref]:3d}/{r.total[ref]:3d}")
    lines += [f"  miss {m}" for m in r.misses[:40]]
    return lines


# ------------------------------------------------------------------------------------------------ long sessions

#: The cycle of a long session after "make the object red" (pointed at): a word there and back (the way back is the
#: opposite edit, so a restore), the object blue and red again (a restore), darker, undo. `what` says what to measure.
LONG_CYCLE = (
    ("replace the text 'SALE' with 'OPEN'", "edit"),
    ("replace the text 'OPEN' with 'SALE'", "sign back"),
    ("make the red object blue", "edit"),
    ("make it red again", "object back"),
    ("make it a bit darker", "edit"),
    ("undo", "edit"),
)


def run_long(home: Path, turns: int) -> list[str]:
    """A `turns`-turn session on a real photo with a sign: the first turn recolours the object (pointed at), then
    `LONG_CYCLE` repeats; each way back is compared with the state it returns to (the image before the edit it
    undoes), and at the end everything outside the edit regions with the upload."""
    from PIL import Image

    from costa.session.core import Pointing
    from costa.session.turns import TurnOptions

    scene = make_scene({"photo": "coffee", "box": [64, 8, 112, 88], "sign": {"text": "SALE", "at": [168, 8]}})
    assert scene.box is not None and scene.sign is not None
    core = _core(home)
    lines: list[str] = []
    try:
        path = home / "long.png"
        Image.fromarray(scene.image).save(path)
        sid = core.new_session(None).id
        core.upload(sid, None, path)
        original = scene.image
        obj, sign = _box_mask(original.shape, scene.box), _box_mask(original.shape, scene.sign)
        edit_region = _box_mask(original.shape, scene.box, 16) | _box_mask(original.shape, scene.sign, 16)
        opts = TurnOptions.validate(core.settings, accept_unverified=True)  # as a person accepting each proposal
        box = ",".join(str(v) for v in scene.box)
        first = _last_view(core.run(core.prepare(sid, None, "make the object red", opts, Pointing(box=box))))
        drift: dict[str, list[float]] = {"sign back": [], "object back": []}
        returns_to: dict[str, np.ndarray] = {}  # the state each way back must return to: the image before its edit
        passed_once: set[str] = set()
        late: list[str] = []
        for k in range(1, turns):
            text, what = LONG_CYCLE[(k - 1) % len(LONG_CYCLE)]
            _, prior = core.head(sid, None)
            if "'SALE' with 'OPEN'" in text:
                returns_to["sign back"] = prior
            elif text == "make the red object blue":
                returns_to["object back"] = prior
            view = _last_view(core.run(core.prepare(sid, None, text, opts)))
            ok = view is not None and view.status == "done"
            if ok:
                passed_once.add(text)
            elif text in passed_once:
                late.append(f"turn {k + 1} {text!r}: {'; '.join(view.errors) if view else 'no view'}"[:160])
            _, now = core.head(sid, None)
            target = returns_to.get(what)
            if target is not None and target.shape == now.shape:
                drift[what].append(delta_e(target, now, sign if what == "sign back" else obj))
        _, final = core.head(sid, None)
        outside = (np.abs(final.astype(int) - original.astype(int)).max(axis=2) > 0) & ~edit_region
        lines.append(
            f"long session, {turns} turns (first: {first.status if first else '?'}): pixels changed outside every "
            f"edit region {int(outside.sum())} of {int((~edit_region).sum()):,} (goal 0)"
        )
        for what, values in drift.items():
            if values:
                lines.append(f"  drift, {what}: mean ΔE2000 {np.mean(values):.2f}, worst {max(values):.2f} over "
                             f"{len(values)} returns (goal ≤ 2)")  # fmt: skip
        lines.append(f"  turns that failed late after the same instruction passed earlier: {len(late)}")
        lines += [f"    {x}" for x in late[:8]]
    finally:
        core.close()
    return lines


HELP = "multi-turn follow-up sessions on real photos: resolution per reference type, end-to-end pass"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare this benchmark's options."""
    p.add_argument("--part", choices=("dev", "held-out", "both"), default="both", help="which part to run")
    p.add_argument("--sessions", type=int, default=0, help="only the first N sessions of each part (0: all)")
    p.add_argument("--long", action="store_true", help="run the long-session drift benchmark instead")
    p.add_argument("--turns", type=int, default=100, help="turns of the long session")


def run(args: argparse.Namespace) -> int:
    """Run and print the report."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        if args.long:
            print("\n".join(run_long(home, args.turns)))
            return 0
        for name, file in PARTS:
            if args.part not in ("both", name):
                continue
            path = SUITES_DIR / file
            if args.sessions:
                import yaml

                doc = yaml.safe_load(path.read_text(encoding="utf-8"))
                doc["sessions"] = doc["sessions"][: args.sessions]
                path = home / file
                path.write_text(yaml.safe_dump(doc), encoding="utf-8")
            print("\n".join(format_part(run_part(name, path, home / name))))
    return 0
