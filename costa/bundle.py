"""The reproducibility bundle: one zip with everything needed to understand and rerun a session.

Contents:

- `manifest.json`: costa and Python versions, the versions of the packages the tools use, hashes of the tool tables,
  the settings that shape a turn (never keys or passwords), seeds;
- `session.json`: the session id, the current version and the redo stack;
- `versions.json` and `images/v<id>.png`: every version with its parent, the turn and subtask that made it, and the
  SHA-256 of its pixels (`costa.store.image_sha256`);
- `turns/turn-<id>.json`: instruction, plan, α, threshold, region, every tool call with the parameters it ran with,
  costs, status and the full event stream;
- `scores.csv`: the evaluator scores, when there are any;
- `README.txt`: how to rerun each turn with `python -m costa edit`.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import platform
import sys
import time
import zipfile
from importlib import metadata
from pathlib import Path
from typing import Any

from costa.config import Settings
from costa.store import Session, Store, accuracy
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


def package_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def _table_hashes() -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(TABLE_DIR.glob("*")) if p.is_file()}


def manifest(settings: Settings) -> dict[str, Any]:
    """Versions, table hashes, turn-shaping settings and seeds (no secrets)."""
    try:
        costa_version = metadata.version("costa")
    except metadata.PackageNotFoundError:
        costa_version = "source checkout"
    return {
        "created": time.time(),
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
    from costa.agent import step_params
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
            json.dumps({"id": session.id, "created": session.created, "head": session.head, "redo": session.redo}),
        )
        rows = []
        for v in versions:
            name = f"images/v{v.id}.png"
            z.write(v.file, name, compress_type=zipfile.ZIP_STORED)
            rows.append({**v.summary(), "created": v.created, "file": name})
        z.writestr("versions.json", json.dumps(rows, indent=2))
        readme = ["Rerun a turn from its base image with the same plan inputs:", ""]
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
                "created": t.created,
                "finished": t.finished,
            }
            z.writestr(f"turns/turn-{t.id}.json", json.dumps(record, indent=2, default=str))
            if t.base_version is not None:
                cmd = f'python -m costa edit images/v{t.base_version}.png "{t.instruction}" -o out-{t.id}.png'
                cmd += f" --alpha {t.params.get('alpha', settings.alpha)}"
                cmd += f" --threshold {t.params.get('threshold', settings.threshold)}"
                if t.params.get("box"):
                    cmd += f" --box {t.params['box']}"
                readme.append(f"turn {t.id} ({t.status}): {cmd}")
                if t.params.get("clicks"):
                    readme.append(f"  (the user clicked at {t.params['clicks']}; see costa.pointing)")
        z.writestr("README.txt", "\n".join(readme) + "\n")
        if scores:
            z.writestr("scores.csv", scores_csv(store, session_id))
    return path


def scores_csv(store: Store, session_id: str) -> str:
    """The session's evaluator scores as CSV, with each task's accuracy and the overall accuracy."""
    turns = {t.id: t for t in store.turns(session_id)}
    scores = store.scores(session_id)
    tasks, overall = accuracy(scores)
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(
        ["session", "turn_id", "instruction", "subtask_id", "kind", "score", "level", "comment", "evaluator",
         "task_accuracy", "overall_accuracy", "created"]
    )  # fmt: skip
    for s in scores:
        turn = turns.get(s.turn_id)
        kinds = {x["id"]: x["kind"] for x in ((turn.plan or {}).get("subtasks", []) if turn else [])}
        level = "full" if s.score == 1.0 else ("fail" if s.score == 0.0 else "partial")
        w.writerow(
            [session_id, s.turn_id, turn.instruction if turn else "", s.subtask_id, kinds.get(s.subtask_id, ""),
             s.score, level, s.comment, s.evaluator, tasks.get(s.turn_id), overall, s.created]
        )  # fmt: skip
    return buf.getvalue()
