"""The reproducibility bundle: one zip with everything needed to understand and rerun a session.

Contents:

- `manifest.json`: costa and Python versions, the versions of the packages the tools use, hashes of the tool tables,
  the settings that shape a turn (never keys or passwords), seeds;
- `session.json`: the session's export name (a hash: the id itself is an access key and never leaves the server),
  the current version and the redo stack;
- `versions.json` and `images/v<id>.<ext>`: every version with its parent, the turn and subtask that made it, and the
  SHA-256 of its pixels (`costa.store.image_sha256`); the file is the stored one (lossless WebP or PNG for results,
  the upload's own file for an upload); a version whose file is missing from the store is listed with `missing`;
- `turns/turn-<id>.json`: instruction, plan, α, threshold, region, every tool call with the parameters it ran with,
  costs, status and the full event stream;
- `scores.csv`: the evaluator scores, when there are any;
- `masks/turn-<id>.png`: the brush mask a turn was given, when it had one;
- `README.txt`: how to rerun each turn with `python -m costa edit`.

Everything in the bundle is the user's text shown as data, never run or interpreted: the rerun lines quote every
argument for the shell and put the image and instruction after `--` (an instruction such as `--events=/path` stays an
instruction); control and bidirectional-override characters are written as escapes (`$'…'` quoting in the commands,
`\u202e` in prose), so `cat README.txt` cannot clear a screen or reorder what it shows; CSV cells that a spreadsheet
would read as a formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage return) get a leading `'`, as OWASP
recommends.
"""

from __future__ import annotations

import csv
import datetime
import functools
import hashlib
import io
import json
import platform
import re
import shlex
import sys
import time
import zipfile
from importlib import metadata
from pathlib import Path
from typing import Any

from costa.config import Settings
from costa.store import Session, Store, Turn, accuracy
from costa.tables import Tables

#: Distributions whose versions decide what the embedded tools and the app do.
PACKAGES = (
    "numpy",
    "pillow",
    "opencv-python-headless",
    "rapidocr",
    "onnxruntime",
    "patchmatch-cython",
    "scikit-image",
    "networkx",
    "pydantic",
    "gradio",
    "openai",
    "torch",
    "diffusers",
    "transformers",
)
TABLE_DIR = Path(__file__).resolve().parents[1] / "tool_tables"
#: Seeds the embedded tools use (GrabCut seeds OpenCV's RNG with 0); nothing else draws random numbers.
SEEDS = {"opencv": 0}
#: Characters a terminal or a text viewer acts on instead of showing: C0/C1 controls, DEL, bidirectional marks,
#: embeddings, overrides and isolates, zero-width and other invisible format characters.
UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb]")
#: What a spreadsheet reads as the start of a formula (OWASP "CSV injection").
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _escape(ch: str) -> str:
    o = ord(ch)
    return {"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(ch) or (f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}")


def safe_text(text: str) -> str:
    r"""`text` with every control and bidi character written as an escape (for prose a terminal shows).

    >>> print(safe_text("ok\x1b[2J \u202egnp.exe"))
    ok\x1b[2J \u202egnp.exe
    """
    return UNSAFE.sub(lambda m: _escape(m.group()), text)


def shell_quote(arg: str) -> str:
    r"""One shell word that is exactly `arg`: POSIX single quotes, or bash's `$'…'` when `arg` holds characters a
    terminal would act on (so the line shows safely and still passes them exactly).

    >>> print(shell_quote("it's"), shell_quote("a\x1bb"), shell_quote("--events=/x"))
    'it'"'"'s' $'a\x1bb' --events=/x
    """
    if not UNSAFE.search(arg):
        return shlex.quote(arg)
    body = arg.replace("\\", "\\\\").replace("'", "\\'")
    return "$'" + UNSAFE.sub(lambda m: _escape(m.group()), body) + "'"


def csv_cell(value: Any) -> Any:
    """A CSV cell a spreadsheet shows as text: a leading `'` when text would start a formula (OWASP).

    >>> csv_cell("=HYPERLINK(1)"), csv_cell("-2"), csv_cell("fine"), csv_cell(0.5)
    ("'=HYPERLINK(1)", "'-2", 'fine', 0.5)
    """
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def export_name(session_id: str) -> str:
    """A short name for a session in exported files: a hash, since the session id is its access key."""
    return hashlib.sha256(f"costa-export:{session_id}".encode()).hexdigest()[:10]


def iso_time(seconds: float | None) -> str:
    """A Unix time as ISO 8601 in UTC ("" for None)."""
    if seconds is None:
        return ""
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).isoformat(timespec="seconds")


@functools.cache
def package_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


@functools.cache
def _table_hashes() -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(TABLE_DIR.glob("*")) if p.is_file()}


def manifest(settings: Settings) -> dict[str, Any]:
    """Versions, table hashes, turn-shaping settings and seeds (no secrets)."""
    try:
        costa_version = metadata.version("costa")
    except metadata.PackageNotFoundError:
        costa_version = "source checkout"
    return {
        "created": iso_time(time.time()),
        "costa": costa_version,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": package_versions(),
        "tool_tables_sha256": _table_hashes(),
        "settings": {
            "alpha": settings.alpha,
            "threshold": settings.threshold,
            "max_pixels": settings.max_pixels,
            "llm_model": settings.llm_model,
            "llm_endpoint_configured": bool(settings.openai_base_url or settings.openai_api_key),
        },
        "seeds": SEEDS,
    }


def _tool_calls(tables: Tables, plan: dict[str, Any] | None, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each tool attempt with the parameters it ran with (retry schedule + the plan's overrides) and its outcome."""
    from costa.turn.records import step_params
    from costa.types import Plan

    parsed = Plan.model_validate(plan) if plan else None
    calls: list[dict[str, Any]] = []
    for ev in events:
        if ev.get("kind") == "tool_started":
            params: dict[str, Any] = {}
            if parsed is not None and ev["tool"] in tables.tools:
                try:
                    params = step_params(tables.tools[ev["tool"]], parsed.by_id(ev["subtask_id"]), ev["attempt"])
                except (KeyError, ValueError):
                    params = {}
            calls.append(
                {"subtask_id": ev["subtask_id"], "tool": ev["tool"], "attempt": ev["attempt"], "params": params}
            )
        elif ev.get("kind") == "tool_finished" and calls:
            for c in reversed(calls):
                if c["tool"] == ev["tool"] and c["subtask_id"] == ev["subtask_id"] and "seconds" not in c:
                    c.update(seconds=ev["seconds"], quality=ev["quality"], passed=ev["passed"], reasons=ev["reasons"])
                    break
    return calls


def write_bundle(store: Store, session: Session, tables: Tables, settings: Settings, path: Path) -> Path:
    """Write the session's reproducibility bundle to `path` (a .zip) and return it (access already checked)."""
    session_id = session.id
    versions = store.versions(session_id)
    turns = store.turns(session_id)
    scores = store.scores(session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("manifest.json", json.dumps(manifest(settings), indent=2))
        z.writestr(
            "session.json",
            json.dumps(
                {
                    "name": export_name(session.id),
                    "created": iso_time(session.created),
                    "head": session.head,
                    "redo": session.redo,
                }
            ),
        )
        rows, names = [], {}
        for v in versions:
            name = names[v.id] = f"images/v{v.id}{Path(v.file).suffix or '.png'}"
            row: dict[str, Any] = {**v.summary(), "created": iso_time(v.created), "file": name}
            if Path(v.file).is_file():
                z.write(v.file, name, compress_type=zipfile.ZIP_STORED)
            else:
                row.update(file=None, missing="the image file is missing from the store (see `costa store check`)")
            rows.append(row)
        z.writestr("versions.json", json.dumps(rows, indent=2))
        readme = [
            "Rerun a turn from its base image with the same plan inputs (commands for a POSIX shell; arguments holding",
            "control characters use bash's $'...' quoting):",
            "",
        ]
        for t in turns:
            record = {
                "id": t.id,
                "instruction": t.instruction,
                "base_version": t.base_version,
                "result_version": t.result_version,
                "status": t.status,
                "params": t.params,
                "plan": t.plan,
                "costs": t.summary,
                "tool_calls": _tool_calls(tables, t.plan, t.events),
                "events": t.events,
                "created": iso_time(t.created),
                "finished": iso_time(t.finished),
            }
            z.writestr(f"turns/turn-{t.id}.json", json.dumps(record, indent=2, default=str))
            if t.base_version is not None:
                mask = store.turn_mask(t)
                if mask is not None:
                    z.write(mask, f"masks/turn-{t.id}.png", compress_type=zipfile.ZIP_STORED)
                base = names.get(t.base_version, f"images/v{t.base_version}.png")
                readme.append(f"turn {t.id} ({t.status}): {rerun_command(t, settings, mask is not None, base)}")
        z.writestr("README.txt", "\n".join(readme) + "\n")
        if scores:
            z.writestr("scores.csv", scores_csv(store, session_id))
    return path


def rerun_command(turn: Turn, settings: Settings, has_mask: bool = False, image: str = "") -> str:
    """The `python -m costa edit` command that reruns `turn` from its base image (`image`: its file in the bundle):
    options first, then `--` and the image and instruction, every argument quoted (see `shell_quote`)."""
    p = turn.params
    args = [
        "python", "-m", "costa", "edit", "-o", f"out-{turn.id}.png",
        "--alpha", str(p.get("alpha", settings.alpha)), "--threshold", str(p.get("threshold", settings.threshold)),
    ]  # fmt: skip
    if p.get("box"):
        args += ["--box", str(p["box"]).replace(" ", "")]
    if has_mask:
        args += ["--mask", f"masks/turn-{turn.id}.png"]
    for click in p.get("clicks") or ():
        args += ["--point", f"{int(click[0])},{int(click[1])}"]
    if p.get("mode") == "eager":
        args.append("--eager")
    args += ["--", image or f"images/v{turn.base_version}.png", turn.instruction]
    return " ".join(shell_quote(a) for a in args)


def scores_csv(store: Store, session_id: str) -> str:
    """The session's evaluator scores as CSV, with each task's accuracy and the overall accuracy, then one row per
    proposed subtask (`record` "verdict"): its final tool and context, why costa could not vouch for it, and the
    person's verdict (accepted / discarded / refined, or the proposal's status while undecided) with who and when.

    `session` is the session's export name (the page's status line shows the same), `turn` the turn's number within
    the session (as the page and the evaluator tab show it), `turn_id` the store's id (the API's)."""
    from costa.session.verdicts import proposal_rows

    turns = {t.id: t for t in store.turns(session_id)}
    numbers = {tid: i for i, tid in enumerate(turns, 1)}
    scores = store.scores(session_id)
    tasks, overall = accuracy(scores)
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(
        ["session", "record", "turn", "turn_id", "instruction", "subtask_id", "kind", "score", "level", "comment",
         "evaluator", "task_accuracy", "overall_accuracy", "tool", "context", "verdict", "reason", "created"]
    )  # fmt: skip
    name = export_name(session_id)
    for s in scores:
        turn = turns.get(s.turn_id)
        kinds = {x["id"]: x["kind"] for x in ((turn.plan or {}).get("subtasks", []) if turn else [])}
        level = "full" if s.score == 1.0 else ("fail" if s.score == 0.0 else "partial")
        w.writerow(
            csv_cell(c)
            for c in [name, "score", numbers.get(s.turn_id, ""), s.turn_id, turn.instruction if turn else "",
                      s.subtask_id, kinds.get(s.subtask_id, ""), s.score, level, s.comment, s.evaluator,
                      tasks.get(s.turn_id), overall, "", "", "", "", iso_time(s.created)]
        )  # fmt: skip
    for r in proposal_rows(store, session_id):
        w.writerow(
            csv_cell(c)
            for c in [name, "verdict", numbers.get(r.turn_id, ""), r.turn_id, r.instruction, r.subtask_id, r.kind, "",
                      "", "", r.who, "", "", r.tool, r.context, r.verdict, r.reason, iso_time(r.when)]
        )  # fmt: skip
    return buf.getvalue()
