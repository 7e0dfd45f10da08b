"""The real-photo suite's cases: real photos and real cut-outs with truth by construction (issue 18 part 1).

Every case is a definition (`RealCase`, stored in `tests/data/real/cases.yaml`, written by `generate_cases`) built at
run time into the image costa gets, the pointing a user would give and the truth (`build_case`):

- removal: a real object (hand-made mask, `costa.real.photos`) pasted onto another real photo at a plausible scale and
  place; truth is the background photo; the object pointed at by one click, a box or a brush;
- background: "remove the background" / "cut out the X" on such a composite; truth is the pasted object's mask;
- outpaint: a real photo cropped on one or more sides (by a percentage or to an aspect ratio); truth is the whole
  photo, so the invented margin is compared with what was really there;
- recolour: "make the X blue" on a composite; truth is the object's mask and the asked colour;
- deblur: a sharp real photo blurred (Gaussian); truth is the sharp photo;
- adjust: global adjustments of a real photo; truth is the asked direction of a CIELAB statistic with the photo's
  structure kept;
- text: reading a real sign (words transcribed by hand in `tests/data/real/text.yaml`);
- multi: a removal followed by a global adjustment or an extension, each subtask judged on its own truth;
- bgblur: "blur the background" (portrait mode) on a composite; truth is the pasted object's mask: it must stay as
  it was while the rest of the photo loses its detail;
- retext: "change the word 'ROAD' to 'PATH'" on a real sign; truth is every word's box and the sign's panel,
  measured by hand (`costa.real.signs`, `tests/data/real/signs.yaml`).

A case uses only photos of its part (`costa.real.photos.Photo.part`), so `part` is fixed by the photos it uses.

Iterate with truth (what the `honest` and `weights` engineers tune and measure on):
    >>> from costa.real.cases import iter_built
    >>> for built in iter_built(part="dev", kinds=("removal",), n=2):  # doctest: +SKIP
    ...     built.image, built.truth.mask, built.truth.background, built.pointing
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import yaml

from costa.real.photos import DATA_DIR, SIDE, available, load_cutout, load_photo, object_ids, photo, photos
from costa.real.signs import POINT_MARGIN, Sign, grow_box, retext_definitions, sign_for

CASES_FILE = DATA_DIR / "cases.yaml"
TEXT_FILE = DATA_DIR / "text.yaml"
KINDS: tuple[str, ...] = (
    "removal", "background", "outpaint", "recolour", "deblur", "adjust", "text", "multi", "bgblur", "retext"
)  # fmt: skip
POINTINGS: tuple[str, ...] = ("click", "box", "brush")
_ADJUSTS: tuple[tuple[str, str], ...] = (
    ("make the photo brighter", "brighter"),
    ("make the photo darker", "darker"),
    ("increase the contrast", "more contrast"),
    ("reduce the contrast", "less contrast"),
    ("make the photo more saturated", "more saturated"),
    ("make the photo warmer", "warmer"),
    ("make the photo cooler", "cooler"),
    ("convert the photo to black and white", "grayscale"),
)
_COLOURS: tuple[str, ...] = ("red", "blue", "green", "yellow", "purple", "pink", "orange")
#: Outpainting forms: (instruction tail, sides cut, share of the photo's width/height cut per side, or aspect "W:H").
_OUTPAINTS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("extend the image to the right by 30%", ("right",), "30%"),
    ("extend the image to the left by 25%", ("left",), "25%"),
    ("extend the image upwards by 20%", ("top",), "20%"),
    ("extend the image downwards by 25%", ("bottom",), "25%"),
    ("extend the canvas on all sides by 20%", ("left", "right", "top", "bottom"), "20%"),
    ("outpaint the image to 16:9", ("left", "right"), "16:9"),
    ("outpaint the image to 1:1", ("top", "bottom"), "1:1"),
    ("outpaint the image to 4:5", ("top", "bottom"), "4:5"),
)
#: Background-blur forms: (instruction, with "{name}" for the object's name, pointing).
_BLURS: tuple[tuple[str, str], ...] = (
    ("blur the background behind the {name}", "none"),
    ("blur everything except the {name}", "click"),
    ("keep the {name} sharp and blur the rest", "box"),
    ("make the background blurry", "brush"),
)


@dataclass(frozen=True)
class RealCase:
    """One case's definition: what is composited or cut, what the user says and how they point.

    `photo` is the background (or the photo itself), `obj` the pasted cut-out's id (""), `place` where it is pasted
    (centre x and bottom y as shares of the width and height, height as a share of the image's), `params` what the
    kind needs (the outpaint form, the colour, the blur σ, the adjustment, the words).
    """

    id: str
    kind: str
    part: str
    photo: str
    instruction: str
    pointing: str = "none"
    obj: str = ""
    place: tuple[float, float, float] = (0.5, 0.8, 0.3)
    params: dict[str, Any] = field(default_factory=dict)

    def photos_used(self) -> tuple[str, ...]:
        """The ids of every real photo this case's pixels come from."""
        from costa.real.photos import CutOut  # noqa: F401  (documentation: the object's photo)

        extra = (_object_photo(self.obj),) if self.obj else ()
        return (self.photo, *extra)


@dataclass(frozen=True, eq=False)
class Truth:
    """What a right result is judged against (fields a kind does not use are None).

    `mask`: the object's bool mask on the input image; `background`: the input without the object (removal);
    `canvas`: the whole photo an outpainting must rebuild, with `offset` (x, y) where the input sits in it;
    `rgb`: the asked colour; `sharp`: the photo before blurring; `adjust`: the asked adjustment; `words`: the words
    on the sign (hand-transcribed); `sign`: the sign's hand-measured words and panel, `old` the word to replace by
    `new` (retext).
    """

    mask: np.ndarray | None = None
    background: np.ndarray | None = None
    canvas: np.ndarray | None = None
    offset: tuple[int, int] = (0, 0)
    rgb: tuple[int, int, int] | None = None
    sharp: np.ndarray | None = None
    adjust: str = ""
    words: tuple[str, ...] = ()
    sign: Sign | None = None
    old: str = ""
    new: str = ""


@dataclass(frozen=True, eq=False)
class BuiltCase:
    """A case ready to run: the input image, the user's pointing and the truth per subtask (in plan order)."""

    case: RealCase
    image: np.ndarray
    pointing: str
    click: tuple[int, int] | None
    box: tuple[int, int, int, int] | None  # x, y, w, h
    brush: np.ndarray | None
    truth: Truth
    steps: tuple[str, ...]  # the suite kinds of its subtasks, in the order the instruction says them
    step_truths: tuple[Truth, ...]


# ------------------------------------------------------------------------------------------------ definitions


@functools.lru_cache(maxsize=1)
def _object_rows() -> dict[str, dict[str, Any]]:
    doc = yaml.safe_load((DATA_DIR / "objects.yaml").read_text(encoding="utf-8"))
    return {str(r["id"]): r for r in doc["objects"]}


def _object_photo(object_id: str) -> str:
    return str(_object_rows()[object_id]["photo"])


@functools.lru_cache(maxsize=1)
def text_signs() -> tuple[dict[str, Any], ...]:
    """Hand-transcribed signs: photo id and the words a reader must find."""
    return tuple(yaml.safe_load(TEXT_FILE.read_text(encoding="utf-8"))["signs"])


def _rng(*key: object) -> np.random.Generator:
    digest = hashlib.sha256("/".join(map(str, key)).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def _place(rng: np.random.Generator, x0: float, x1: float, lo: float, hi: float) -> tuple[float, float, float]:
    """Centre x in [x0, x1], bottom y in the lower quarter, height in [lo, hi] (shares), rounded as stored."""
    x, y, h = rng.uniform(x0, x1), rng.uniform(0.75, 0.95), rng.uniform(lo, hi)
    return (round(float(x), 4), round(float(y), 4), round(float(h), 4))


def generate_cases(seed: int = 0) -> list[RealCase]:
    """Every case definition, deterministic in `seed` (the committed cases.yaml is `generate_cases(0)`)."""
    out: list[RealCase] = []
    by_part: dict[str, list[str]] = {"dev": [], "held_out": []}
    for p in photos():
        by_part[p.part].append(p.id)
    objects = {part: [o for o in object_ids() if photo(_object_photo(o)).part == part] for part in by_part}
    for part, ids in by_part.items():
        objs = objects[part]
        rng = _rng(seed, part)
        backgrounds = [i for i in ids if i not in {_object_photo(o) for o in objs}] or ids
        k = 0
        # removal and background removal / segmentation and recolouring on composites
        for kind, per_object in (("removal", 8), ("background", 4), ("recolour", 4)):
            for o in objs:
                row = _object_rows()[o]
                for j in range(per_object):
                    bg = backgrounds[int(rng.integers(len(backgrounds)))]
                    lo, hi = row["height"]
                    place = _place(rng, 0.25, 0.75, lo, hi)
                    pointing = POINTINGS[j % 3]
                    name = row["name"]
                    params: dict[str, Any] = {}
                    if kind == "removal":
                        text = f"remove the {name}"
                    elif kind == "background":
                        text = "remove the background" if j % 2 == 0 else f"cut out the {name}"
                        pointing = ("box", "click", "brush", "box")[j % 4]
                    else:
                        colour = _COLOURS[int(rng.integers(len(_COLOURS)))]
                        params = {"colour": colour}
                        text = f"make the {name} {colour}"
                    k += 1
                    out.append(RealCase(f"{part}-{kind}-{k:03d}", kind, part, bg, text, pointing, o, place, params))
        for i, pid in enumerate(ids):
            tail, sides, amount = _OUTPAINTS[i % len(_OUTPAINTS)]
            form = {"sides": list(sides), "amount": amount}
            out.append(RealCase(f"{part}-outpaint-{pid}", "outpaint", part, pid, tail, params=form))
            sigma = (1.2, 2.0, 3.0)[i % 3]
            out.append(
                RealCase(f"{part}-deblur-{pid}", "deblur", part, pid, "sharpen the photo", params={"sigma": sigma})
            )
            text, adjust = _ADJUSTS[i % len(_ADJUSTS)]
            out.append(RealCase(f"{part}-adjust-{pid}", "adjust", part, pid, text, params={"adjust": adjust}))
        for sign in text_signs():
            if photo(sign["photo"]).part == part:
                out.append(RealCase(f"{part}-text-{sign['photo']}", "text", part, sign["photo"], "read the text",
                                    params={"words": list(sign["words"])}))  # fmt: skip
        for j, o in enumerate(objs):
            row = _object_rows()[o]
            for m in range(2):
                bg = backgrounds[int(rng.integers(len(backgrounds)))]
                lo, hi = row["height"]
                place = _place(rng, 0.3, 0.6, lo, hi)
                if m == 0:
                    text, adjust = _ADJUSTS[(j + m) % len(_ADJUSTS)]
                    instruction = f"remove the {row['name']} and {text}"
                    params = {"then": "adjust", "adjust": adjust}
                else:
                    instruction = f"remove the {row['name']} and extend the image to the right by 25%"
                    params = {"then": "outpaint", "sides": ["right"], "amount": "25%"}
                out.append(RealCase(f"{part}-multi-{o}-{m}", "multi", part, bg, instruction, "box", o, place, params))
        out += _blur_cases(seed, part, objs, backgrounds)
        out += [RealCase(**d) for d in retext_definitions(part)]
    return out


def _blur_cases(seed: int, part: str, objs: Sequence[str], backgrounds: Sequence[str]) -> list[RealCase]:
    """Background blur on composites: every form of `_BLURS` per object (its own random stream, added after the
    other kinds, so their definitions did not move)."""
    rng = _rng(seed, part, "bgblur")
    out = []
    for o in objs:
        row = _object_rows()[o]
        for j, (text, pointing) in enumerate(_BLURS):
            bg = backgrounds[int(rng.integers(len(backgrounds)))]
            lo, hi = row["height"]
            place = _place(rng, 0.3, 0.7, lo, hi)
            instruction = text.format(name=row["name"])
            out.append(RealCase(f"{part}-bgblur-{o}-{j}", "bgblur", part, bg, instruction, pointing, o, place))
    return out


def write_cases(cases: Sequence[RealCase]) -> None:
    """Write the definitions to cases.yaml (run once when photos, objects or kinds are added; then look at them)."""
    rows = []
    for c in cases:
        d = asdict(c)
        d["place"] = [round(v, 4) for v in c.place]
        rows.append(d)
    head = (
        "# The real-photo suite's case definitions: costa.real.cases.generate_cases(0), committed so a case\n"
        "# keeps its meaning when the generator changes. `part` follows the photos' fixed split (photos.yaml).\n"
    )
    CASES_FILE.write_text(head + yaml.safe_dump({"cases": rows}, sort_keys=False, width=120), encoding="utf-8")


@functools.lru_cache(maxsize=1)
def load_cases() -> tuple[RealCase, ...]:
    """The committed case definitions."""
    doc = yaml.safe_load(CASES_FILE.read_text(encoding="utf-8"))
    out = []
    for d in doc["cases"]:
        d = dict(d)
        d["place"] = tuple(d["place"])
        out.append(RealCase(**d))
    return tuple(out)


def select_cases(
    part: str | None = None, kinds: Sequence[str] | None = None, n: int | None = None, seed: int = 0
) -> list[RealCase]:
    """Cases of `part` ("dev", "held_out", None for both) and `kinds`, whose photos are here; at most `n` per kind,
    drawn by `seed` (all, in file order, when `n` is None)."""
    pool = [c for c in load_cases() if (part is None or c.part == part) and (not kinds or c.kind in kinds)]
    pool = [c for c in pool if all(available(photo(p)) for p in c.photos_used())]
    if n is None:
        return pool
    out: list[RealCase] = []
    for kind in KINDS:
        of_kind = [c for c in pool if c.kind == kind]
        if len(of_kind) > n:
            pick = sorted(_rng(seed, kind).choice(len(of_kind), size=n, replace=False).tolist())
            of_kind = [of_kind[i] for i in pick]
        out.extend(of_kind)
    return out


# --------------------------------------------------------------------------------------------------- building


def composite(background: np.ndarray, obj_id: str, place: tuple[float, float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Paste the cut-out onto `background`: centre x and bottom y at `place[0:2]` (shares), height `place[2]` of the
    image's height; returns (image, bool mask). The edge is feathered over one pixel, as a real object's edge is."""
    import cv2

    cut = load_cutout(obj_id)
    if cut is None:
        raise FileNotFoundError(f"the photo of object {obj_id} is not available")
    h, w = background.shape[:2]
    oh = max(8, round(place[2] * h))
    ow = max(4, round(cut.rgb.shape[1] * oh / cut.rgb.shape[0]))
    if ow > 0.9 * w:
        ow = int(0.9 * w)
        oh = max(8, round(cut.rgb.shape[0] * ow / cut.rgb.shape[1]))
    rgb = cv2.resize(cut.rgb, (ow, oh), interpolation=cv2.INTER_AREA)
    alpha = cv2.resize(cut.mask.astype(np.float32), (ow, oh), interpolation=cv2.INTER_AREA)
    alpha = cv2.GaussianBlur(alpha, (3, 3), 0.6)
    x0 = int(np.clip(round(place[0] * w - ow / 2), 2, w - ow - 2))
    y0 = int(np.clip(round(place[1] * h - oh), 2, h - oh - 2))
    out = background.astype(np.float32).copy()
    region = out[y0 : y0 + oh, x0 : x0 + ow]
    out[y0 : y0 + oh, x0 : x0 + ow] = region * (1 - alpha[..., None]) + rgb.astype(np.float32) * alpha[..., None]
    mask = np.zeros((h, w), bool)
    mask[y0 : y0 + oh, x0 : x0 + ow] = alpha > 0.5
    return np.clip(np.rint(out), 0, 255).astype(np.uint8), mask


def pointing_for(mask: np.ndarray, how: str) -> tuple[tuple[int, int] | None, tuple[int, int, int, int] | None,
                                                     np.ndarray | None]:  # fmt: skip
    """A user's pointing at the object of `mask`: one click deep inside it (the point farthest from its edge), a box
    around it with a 4 % margin, or a brush stroke covering it 5 px beyond its edge."""
    import cv2

    h, w = mask.shape
    if how == "click":
        dist = cv2.distanceTransform(mask.astype(np.uint8), cv2.DIST_L2, 5)
        y, x = np.unravel_index(int(np.argmax(dist)), dist.shape)
        return (int(x), int(y)), None, None
    ys, xs = np.nonzero(mask)
    if how == "box":
        mx, my = round(0.04 * (xs.max() - xs.min() + 1)) + 2, round(0.04 * (ys.max() - ys.min() + 1)) + 2
        x0, y0 = max(0, xs.min() - mx), max(0, ys.min() - my)
        x1, y1 = min(w, xs.max() + 1 + mx), min(h, ys.max() + 1 + my)
        return None, (int(x0), int(y0), int(x1 - x0), int(y1 - y0)), None
    if how == "brush":
        k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (11, 11))
        return None, None, cv2.dilate(mask.astype(np.uint8), k) > 0
    raise ValueError(f"unknown pointing {how!r}; expected click, box or brush")


def _cut(photo_rgb: np.ndarray, sides: Sequence[str], amount: str) -> tuple[np.ndarray, np.ndarray, tuple[int, int]]:
    """An input and its truth canvas for an extension `amount` ("30%" or "16:9") on `sides`, both taken from the
    photo: the input is a crop, the canvas the crop plus exactly the margins costa's outpainting geometry asks for
    (`costa.tools.outpaint.outpaint_margins`: the asked size is a convention, the margins' content is the truth).

    Returns (input, canvas, offset of the input in the canvas (x, y)).
    """
    from costa.tools.outpaint import outpaint_margins

    h, w = photo_rgb.shape[:2]
    horizontal = any(s in ("left", "right") for s in sides)
    if ":" in amount:
        a, b = (float(v) for v in amount.split(":"))
        keep = 4 / 3 if a / b >= 1 else 1.0  # the input's aspect (w / h): 4:3 for a wider canvas, 1:1 for 4:5
        ch, cw = (h, min(w, round(h * keep))) if horizontal else (min(h, round(w / keep)), w)
        direction = None
    else:
        share = float(amount.rstrip("%")) / 100
        vertical = any(s in ("top", "bottom") for s in sides)
        ch = int(h / (1 + share)) - 2 if vertical else h
        cw = int(w / (1 + share)) - 2 if horizontal else w
        direction = "all sides" if len(sides) == 4 else sides[0]
    for _ in range(64):  # shrink the input until its canvas fits inside the photo
        m = outpaint_margins(ch, cw, amount, {"direction": direction} if direction else None)
        nh, nw = m.new_size(ch, cw)
        if nh <= h and nw <= w:
            break
        ch, cw = (ch - 2, cw) if nh > h else (ch, cw - 2)
    else:
        raise ValueError(f"no {amount} extension of a {w}x{h} photo fits inside it")
    y0, x0 = (h - nh) // 2, (w - nw) // 2
    canvas = np.ascontiguousarray(photo_rgb[y0 : y0 + nh, x0 : x0 + nw])
    crop = np.ascontiguousarray(canvas[m.top : m.top + ch, m.left : m.left + cw])
    return crop, canvas, (m.left, m.top)


def _aspect_canvas(image: np.ndarray, amount: str) -> np.ndarray:
    """The largest centred crop of `image` with aspect `amount` ("W:H")."""
    a, b = (float(v) for v in amount.split(":"))
    h, w = image.shape[:2]
    if w / h > a / b:
        nw = round(h * a / b)
        x0 = (w - nw) // 2
        return np.ascontiguousarray(image[:, x0 : x0 + nw])
    nh = round(w * b / a)
    y0 = (h - nh) // 2
    return np.ascontiguousarray(image[y0 : y0 + nh])


def build_case(case: RealCase) -> BuiltCase:
    """Composite or cut the case's input, derive the pointing and the truth (deterministic)."""
    import cv2

    from costa.colours import parse_colour

    base = load_photo(case.photo)
    click = box = brush = None
    if case.kind in ("removal", "background", "recolour", "multi", "bgblur"):
        image, mask = composite(base, case.obj, case.place)
        click, box, brush = pointing_for(mask, case.pointing) if case.pointing != "none" else (None, None, None)
        if case.kind == "removal":
            t = Truth(mask=mask, background=base)
            return BuiltCase(case, image, case.pointing, click, box, brush, t, ("removal",), (t,))
        if case.kind == "background":
            t = Truth(mask=mask)
            return BuiltCase(case, image, case.pointing, click, box, brush, t, ("background",), (t,))
        if case.kind == "bgblur":
            t = Truth(mask=mask)
            return BuiltCase(case, image, case.pointing, click, box, brush, t, ("bgblur",), (t,))
        if case.kind == "recolour":
            rgb = parse_colour(case.params["colour"])
            t = Truth(mask=mask, rgb=None if rgb is None else tuple(int(v) for v in rgb))  # type: ignore[arg-type]
            return BuiltCase(case, image, case.pointing, click, box, brush, t, ("recolour",), (t,))
        first = Truth(mask=mask, background=base)
        if case.params["then"] == "adjust":
            second = Truth(adjust=case.params["adjust"])
            return BuiltCase(case, image, "box", click, box, brush, first, ("removal", "adjust"), (first, second))
        # an extension after the removal: the canvas is the background photo, the input its left part with the object
        crop, canvas, offset = _cut(base, case.params["sides"], case.params["amount"])
        image, mask = composite(crop, case.obj, case.place)
        click, box, brush = pointing_for(mask, "box")
        first = Truth(mask=mask, background=crop)
        second = Truth(canvas=canvas, offset=offset)
        return BuiltCase(case, image, "box", click, box, brush, first, ("removal", "outpaint"), (first, second))
    if case.kind == "outpaint":
        amount = case.params["amount"]
        photo_rgb = _aspect_canvas(base, amount) if ":" in amount else base
        crop, canvas, offset = _cut(photo_rgb, case.params["sides"], amount)
        t = Truth(canvas=canvas, offset=offset)
        return BuiltCase(case, crop, "none", None, None, None, t, ("outpaint",), (t,))
    if case.kind == "deblur":
        blurred = cv2.GaussianBlur(base, (0, 0), float(case.params["sigma"]))
        t = Truth(sharp=base)
        return BuiltCase(case, blurred, "none", None, None, None, t, ("deblur",), (t,))
    if case.kind == "adjust":
        t = Truth(adjust=case.params["adjust"])
        return BuiltCase(case, base, "none", None, None, None, t, ("adjust",), (t,))
    if case.kind == "text":
        t = Truth(words=tuple(case.params["words"]))
        return BuiltCase(case, base, "none", None, None, None, t, ("text",), (t,))
    if case.kind == "retext":
        sign = sign_for(case.photo)
        t = Truth(words=tuple(w.text for w in sign.words), sign=sign, old=case.params["old"], new=case.params["new"])
        box = grow_box(sign.word(t.old).box, POINT_MARGIN, base.shape[:2]) if case.pointing == "box" else None
        return BuiltCase(case, base, case.pointing, None, box, None, t, ("retext",), (t,))
    raise ValueError(f"unknown case kind {case.kind!r}")


def iter_built(
    part: str | None = "dev", kinds: Sequence[str] | None = None, n: int | None = None, seed: int = 0
) -> Iterator[BuiltCase]:
    """Built cases of `part` and `kinds` (see `select_cases`): the entry point for tuning checks on the dev part
    and measuring tools (masks, fills) against the truth. Never tune on part="held_out"."""
    for case in select_cases(part, kinds, n, seed):
        yield build_case(case)


__all__ = ["SIDE", "BuiltCase", "RealCase", "Truth", "build_case", "generate_cases", "iter_built", "select_cases"]
