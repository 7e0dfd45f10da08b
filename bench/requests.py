"""Third-party requests rerun (issue 18's measurement): every instruction in ../shared/benchmarks — MagicBrush's 20
turns, EditEval's 42 photos and CoSTA*'s two sample prompts — sent to costa as a user would (session core, the
CLI's path, no pointing, nothing accepted unverified), printing what costa claimed for each and writing a sheet
(before | result | MagicBrush's human target, when there is one) for every image costa wrote, to be looked at.

There is no pixel truth for these requests (MagicBrush's targets are one annotator's DALL-E edit, EditEval has none),
so "right" is decided by looking: the report lists every verified-done request with its sheet's name. The claim that
matters is the one the issue sets: no verified-done result that is wrong.

    python -m costa bench requests [--only magicbrush,editeval,costa] [--n N] [--save DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

SOURCES = ("magicbrush", "editeval", "costa")


@dataclass(frozen=True)
class Request:
    """One third-party request: its source, an id, the image file, the instruction, an optional human target."""

    source: str
    id: str
    image: Path
    instruction: str
    target: Path | None = None


def load_requests(root: Path, only: tuple[str, ...] = SOURCES) -> list[Request]:
    """The requests under `root` (the benchmarks folder), in a fixed order; sources whose folder is absent are
    skipped."""
    out: list[Request] = []
    mb = root / "magicbrush_sample"
    if "magicbrush" in only and (mb / "turns.json").is_file():
        for t in json.loads((mb / "turns.json").read_text(encoding="utf-8")):
            out.append(Request("magicbrush", str(t["id"]), mb / t["source_image"], str(t["instruction"]),
                               mb / t["target_image"]))  # fmt: skip
    ee = root / "editeval_v1"
    if "editeval" in only and (ee / "prompts.json").is_file():
        for p in json.loads((ee / "prompts.json").read_text(encoding="utf-8")):
            if p.get("available"):
                out.append(Request("editeval", str(p["id"]), ee / p["image"], str(p["instruction"])))
    cs = root / "costa"
    if "costa" in only and (cs / "prompts").is_dir():
        for f in sorted((cs / "prompts").glob("*.txt")):
            image = cs / "inputs" / f"{f.stem}.jpeg"
            if image.is_file():
                out.append(Request("costa", f.stem, image, f.read_text(encoding="utf-8").strip()))
    return out


@dataclass
class RequestRun:
    request: Request
    exit_code: int
    status: str
    seconds: float
    kinds: tuple[str, ...]
    done: tuple[str, ...]  # "kind via tool" of each subtask reported done
    note: str
    sheet: str = ""


def run_request(core: Any, req: Request, save: Path | None) -> RequestRun:
    """Run one request through the session core as `costa edit IMAGE "INSTRUCTION"` would."""
    from bench.real import _exit_code
    from costa.errors import CostaError
    from costa.session.turns import TurnOptions

    t0 = time.perf_counter()
    sid = core.new_session(None).id
    opts = TurnOptions.validate(core.settings, None, None, "lazy", None, action="rest", accept_unverified=False)
    view = None
    try:
        upload = core.read_upload(req.image)
        prepared = core.prepare(sid, None, req.instruction, opts, upload=upload)
        for shown, _ in core.run(prepared):
            view = shown
    except CostaError as e:
        return RequestRun(req, 2, "refused", time.perf_counter() - t0, (), (), str(e)[:160])
    assert view is not None
    code = _exit_code(view)
    kinds = tuple(s.kind for s in view.plan.subtasks) if view.plan is not None else ()
    done = tuple(f"{d.subtask_kind} via {'+'.join(d.tools)}" for d in view.done_subtasks.values())
    outcome = view.outcome
    note = "; ".join([*view.errors[:1], *(f"{k}: {v}" for k, v in (outcome.skipped if outcome else {}).items())])
    if outcome is not None and outcome.unverified:
        note = "; ".join(f"unverified {k}: {v}" for k, v in outcome.unverified.items())
    run = RequestRun(req, code, view.status, time.perf_counter() - t0, kinds, done, note[:200])
    written = outcome.image if (outcome is not None and code in (0, 3)) else None
    if save is not None and written is not None:
        run.sheet = _sheet(save, req, upload.image, written, code)
    return run


def _sheet(folder: Path, req: Request, before: np.ndarray, after: np.ndarray, code: int) -> str:
    import cv2
    from PIL import Image

    def fit(im: np.ndarray) -> np.ndarray:
        h, w = im.shape[:2]
        return cv2.resize(np.ascontiguousarray(im[..., :3]), (max(1, round(w * 320 / h)), 320),
                          interpolation=cv2.INTER_AREA)  # fmt: skip

    tiles = [fit(before), fit(after)]
    if req.target is not None and req.target.is_file():
        with Image.open(req.target) as t:
            tiles.append(fit(np.asarray(t.convert("RGB"))))
    body = np.concatenate(tiles, axis=1)
    bar = np.full((22, body.shape[1], 3), 255, np.uint8)
    text = f"{req.source} {req.id} exit {code}: {req.instruction}".encode("ascii", "replace").decode()
    cv2.putText(bar, text[:140], (4, 16), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (0, 0, 0), 1, cv2.LINE_AA)
    name = f"{req.source}-{req.id.replace('/', '_')}.jpg"
    Image.fromarray(np.concatenate([bar, body], axis=0)).save(folder / name, quality=85)
    return name


def format_report(runs: list[RequestRun], wall: float) -> str:
    out = [f"{len(runs)} third-party requests, wall {wall:.0f} s", ""]
    for r in runs:
        req = r.request
        out.append(f"{req.source:10} {req.id:28} exit {r.exit_code} {r.status:10} {r.seconds:6.1f}s  "
                   f"{req.instruction[:70]!r}")  # fmt: skip
        if r.done:
            out.append(f"{'':12}done: {', '.join(r.done)}")
        if r.note:
            out.append(f"{'':12}{r.note}")
        if r.sheet:
            out.append(f"{'':12}sheet: {r.sheet}")
    codes: dict[int, int] = {}
    for r in runs:
        codes[r.exit_code] = codes.get(r.exit_code, 0) + 1
    out.append("")
    out.append("exit codes: " + ", ".join(f"{c}: {n}" for c, n in sorted(codes.items())))
    verified = [r for r in runs if r.exit_code == 0]
    out.append(f"verified done (exit 0): {len(verified)} of {len(runs)}; look at each sheet: "
               + ", ".join(r.sheet or r.request.id for r in verified))  # fmt: skip
    return "\n".join(out)


HELP = "third-party requests (MagicBrush, EditEval, CoSTA*) rerun: costa's claims, a sheet per written image"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare this benchmark's options."""
    p.add_argument("--only", default=",".join(SOURCES), help="comma-separated sources: " + ",".join(SOURCES))
    p.add_argument("--n", type=int, default=None, help="at most N requests per source")
    p.add_argument("--save", default="", help="write a sheet per written image into this folder")


def run(args: argparse.Namespace) -> int:
    """Load the requests, run each, print the report."""
    from costa.config import Settings
    from costa.errors import InputError
    from costa.real.photos import benchmarks_dir
    from costa.services import Services
    from costa.session.core import SessionCore
    from costa.store import Store

    only = tuple(s for s in args.only.split(",") if s)
    for s in only:
        if s not in SOURCES:
            raise InputError(f"--only: unknown source {s!r}; known: {', '.join(SOURCES)}")
    root = benchmarks_dir()
    if root is None:
        print("../shared/benchmarks is absent (COSTA_BENCHMARKS_DIR): skipped")
        return 0
    reqs = load_requests(root, only)
    if args.n is not None:
        reqs = [r for s in only for r in [q for q in reqs if q.source == s][: args.n]]
    save = Path(args.save) if args.save else None
    if save is not None:
        save.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    runs = []
    with tempfile.TemporaryDirectory(prefix="costa-requests-") as scratch:
        settings = dataclasses.replace(Settings.from_env(), home=Path(scratch))
        core = SessionCore(Services(settings), Store(Path(scratch)))
        try:
            for i, req in enumerate(reqs, 1):
                r = run_request(core, req, save)
                runs.append(r)
                print(f"[{i}/{len(reqs)}] {req.source} {req.id} exit {r.exit_code} {r.seconds:.1f}s", flush=True)
        finally:
            core.close()
    print(format_report(runs, time.perf_counter() - t0))
    return 0
