"""Seconds per call of each neural tool at REAL SIZE with random weights (`python -m costa bench neural`).

Compute time does not depend on the weights' values, so a full-size Grounding DINO (tiny), SAM ViT-B, SD-2
inpainting at 512² and InstructPix2Pix built from their configs give real timings on this machine without any
download; so do RT-DETR-R50, DPT-hybrid (MiDaS), Depth Anything V2 Small, CLIP ViT-B/32 and BLIP base, which are
written as full-size snapshots to a temporary folder and loaded through their tools' own resolver and loaders
(BLIP's fake is biased away from special tokens, so it generates the full `max_tokens`: the slowest case). Each tool
runs in its own subprocess (so its peak resident memory is its own) and is timed once (on a GPU, and for the readout
tools on the CPU too, after one warm-up call). Diffusion tools run `--steps` denoising steps (fewer than 20 on a
slow CPU) and report seconds per step; the 20-step figure is then overhead + 20 × per-step, labelled as
extrapolated. `--device cuda` does the same on a GPU (fp16) in well under 5 minutes. `--write` records the rows in
tool_tables/benchmark_devices.csv (seconds only; quality stays from the paper until runs are recorded).

Tools whose class batches (`Tool.batches`: CLIP, BLIP, Grounding DINO, SAM, RT-DETR, depth) are also timed on
`--batch` calls at once through `Tool.call_batch`, the one pass a Ray replica runs for concurrent calls (warmed at
the batch's shapes first); the table prints the seconds per call in the batch and the ratio to one call alone, in the
same process.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, cast

from costa.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
DEVICES_CSV = ROOT / "tool_tables" / "benchmark_devices.csv"
COLUMNS = ("machine", "tool", "seconds_per_call", "seconds_per_step", "steps_timed", "peak_mb", "source", "n")
TOOLS = (
    "grounding_dino", "sam", "sd_inpaint", "instruct_pix2pix",
    "rtdetr_detect", "midas", "depth_anything", "clip_consistency", "blip_caption",
)  # fmt: skip
#: Readout tools: built at full size into a temporary snapshot folder and loaded through their own loader.
READOUTS = {
    "rtdetr_detect": "build_rtdetr",
    "midas": "build_dpt_hybrid",
    "depth_anything": "build_depth_anything",
    "clip_consistency": "build_clip",
    "blip_caption": "build_blip",
}
FULL_STEPS = 20


def _inject(tool: Any, role: str, model: Any) -> None:
    """Put a built model where the tool's loader would put real weights (same cache key), skipping the disk."""
    path = Path(f"<random-weights:{tool.spec.id}>")
    tool.weights_path = lambda index=0: path
    tool.missing = lambda: None
    dev = tool.device()
    tool.shared_model(role, path, lambda p, d: model)
    assert tool.cache().loaded() == [(role, str(path), dev.name, dev.dtype)]


def _one(tool_id: str, device: str, steps: int, batch: int = 8) -> dict[str, Any]:
    """Build, warm up and time one tool in this process; returns seconds, per-step seconds, peak MB, and for a tool
    that batches the seconds per call of `batch` calls in one `call_batch`."""
    import resource

    import numpy as np
    import torch

    from costa.config import Settings
    from costa.services import Services
    from costa.testing import neural_models as synthetic
    from costa.tools.neural import NeuralTool
    from costa.types import Box, EditState, Mask, Subtask

    torch.set_grad_enabled(False)
    settings = Settings.from_env({**os.environ, "COSTA_DEVICE": device})
    services = Services(settings)
    tool = cast(NeuralTool, services.tool(tool_id))  # the benchmarked tools are all neural
    dev = tool.device()
    dtype = dev.torch_dtype()
    rng = np.random.default_rng(0)
    image = rng.integers(0, 256, (768, 1024, 3), dtype=np.uint8)
    box = Box(300, 200, 300, 260, "dog")
    mask = box.to_mask(768, 1024)
    t_build = time.perf_counter()
    if tool_id in READOUTS:
        state, sub, params = _readout(tool, tool_id, image)
    elif tool_id == "grounding_dino":
        import tempfile

        from transformers import AutoProcessor, GroundingDinoConfig, GroundingDinoForObjectDetection

        with tempfile.TemporaryDirectory() as d:  # only the small processor files go to disk
            synthetic.build_grounding_dino(Path(d), "tiny")
            processor = AutoProcessor.from_pretrained(Path(d) / "IDEA-Research/grounding-dino-tiny")
        model = GroundingDinoForObjectDetection(GroundingDinoConfig()).to(dev.name, dtype).eval()  # type: ignore[arg-type]  # transformers: `to` takes a device name
        processor.image_processor.size = {"shortest_edge": 800, "longest_edge": 1333}  # the real checkpoint's
        _inject(tool, "grounding_dino", (processor, model))
        state, sub, params = (
            EditState(image),
            Subtask(id="s", kind="object_detection", target="dog"),
            {"box_threshold": 0.0},
        )
    elif tool_id == "sam":
        from transformers import SamConfig, SamImageProcessor, SamModel, SamProcessor

        model = SamModel(SamConfig()).to(dev.name, dtype).eval()  # type: ignore[arg-type]  # transformers: `to` takes a device name
        _inject(tool, "sam", (SamProcessor(image_processor=SamImageProcessor()), model))
        state, sub, params = EditState(image, {"boxes": (box,)}), Subtask(id="s", kind="object_segmentation"), {}
    elif tool_id == "sd_inpaint":
        pipe = synthetic.build_sd_inpaint(None, "full").to(dev.name, dtype)
        pipe.set_progress_bar_config(disable=True)
        _inject(tool, "sd_inpaint", pipe)
        state = EditState(image, {"masks": (Mask(mask, "dog"),)})
        sub, params = Subtask(id="s", kind="object_replacement", target="dog", result="cat"), {"steps": steps}
    else:
        pipe = synthetic.build_instruct_pix2pix(None, "full").to(dev.name, dtype)
        pipe.set_progress_bar_config(disable=True)
        _inject(tool, "pix2pix", pipe)
        state, sub, params = (
            EditState(image),
            Subtask(id="s", kind="changing_scenery", result="winter"),
            {"steps": steps},
        )
    build_s = time.perf_counter() - t_build
    params = {**tool.spec.params_for_attempt(0), **params}
    if "strength" in params:
        params["strength"] = 1.0  # every timed step runs (strength < 1 skips some)
    from costa.models.control import TurnControl, using_control

    def timed() -> tuple[float, list[float]]:
        marks: list[float] = []
        control = TurnControl(on_event=lambda ev: marks.append(time.perf_counter()))
        sync = torch.cuda.synchronize if dev.name.startswith("cuda") else (lambda: None)
        sync()
        t0 = time.perf_counter()
        with using_control(control, "s", tool_id, 0):
            tool(state, sub, params)
        sync()
        return time.perf_counter() - t0, [b - a for a, b in zip([t0, *marks], marks, strict=False)]

    if dev.is_gpu or tool_id in READOUTS or tool.batches:
        # warm-up (kernels, cuDNN autotuning, allocator); on the CPU only the readouts' calls are cheap enough, and a
        # tool that batches is warmed so that its lone call and its batch are timed alike
        timed()
    seconds, step_times = timed()
    per_step = float(np.median(step_times[1:])) if len(step_times) > 1 else (step_times[0] if step_times else 0.0)
    batch_per_call = None
    if tool.batches and batch > 1:
        from costa.types import ToolCall

        sync = torch.cuda.synchronize if dev.name.startswith("cuda") else (lambda: None)
        calls = [ToolCall(state, sub, params)] * batch
        tool.call_batch(calls)  # warm-up at the batch's shapes, as the lone call was warmed at its own
        sync()
        t0 = time.perf_counter()
        tool.call_batch(calls)
        sync()
        batch_per_call = (time.perf_counter() - t0) / batch
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if dev.name.startswith("cuda"):
        peak_mb = torch.cuda.max_memory_allocated() / 2**20
    return {
        "tool": tool_id,
        "device": dev.name,
        "detail": dev.detail,
        "seconds": seconds,
        "per_step": per_step if step_times else None,
        "steps": len(step_times),
        "build_s": build_s,
        "peak_mb": peak_mb,
        "batch": batch,
        "batch_per_call": batch_per_call,
    }


def _readout(tool: Any, tool_id: str, image: Any) -> tuple[Any, Any, dict[str, Any]]:
    """Build `tool_id`'s full-size random-weight snapshot in a temporary COSTA_MODELS_DIR and point the tool at it
    (it then loads through the resolver and `from_pretrained`, as real weights do); the call's state and subtask."""
    import atexit
    import shutil
    import tempfile

    from costa.testing import neural_readouts
    from costa.types import EditState, Subtask

    d = Path(tempfile.mkdtemp(prefix="costa_bench_models_"))
    atexit.register(shutil.rmtree, d, True)  # this subprocess times one tool and exits
    getattr(neural_readouts, READOUTS[tool_id])(d, "full")
    tool.settings = type(tool.current_settings()).from_env({**os.environ, "COSTA_MODELS_DIR": str(d)})
    tool.ensure_loaded()
    if tool_id == "rtdetr_detect":
        return EditState(image), Subtask(id="s", kind="object_detection", target="dog"), {"threshold": 0.0}
    if tool_id == "clip_consistency":
        sub = Subtask(id="s", kind="caption_consistency_check", target="a dog on a beach")
        return EditState(image), sub, {}
    kind = "image_captioning" if tool_id == "blip_caption" else "depth_estimation"
    return EditState(image), Subtask(id="s", kind=kind), {}


def run_neural_bench(
    device: str = "cpu", steps: int = 2, write: bool = False, tools: tuple[str, ...] = TOOLS, batch: int = 8
) -> str:
    """Time each tool in a subprocess and format the table; `write` records the rows for this machine kind."""
    results: list[dict[str, Any]] = []
    for tid in tools:
        cmd = [sys.executable, "-m", "bench.neural", "--one", tid, "--device", device, "--steps", str(steps),
               "--batch", str(batch)]  # fmt: skip
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
        line = next((x for x in reversed(proc.stdout.splitlines()) if x.startswith("{")), None)
        if proc.returncode != 0 or line is None:
            results.append({"tool": tid, "error": (proc.stderr.strip().splitlines() or ["no output"])[-1]})
            continue
        results.append(json.loads(line))
    lines = [f"neural tools, real-size architectures, random weights, on {device} ({steps} timed diffusion steps)"]
    lines.append(f"  {'tool':18} {'s/call':>9} {'s/step':>8} {'s/call@20':>10} {'peak MB':>8}  build s")
    rows = []
    for r in results:
        if "error" in r:
            lines.append(f"  {r['tool']:18} failed: {r['error']}")
            continue
        call20 = r["seconds"]
        if r["per_step"] is not None and r["steps"]:
            call20 = r["seconds"] + (FULL_STEPS - r["steps"]) * r["per_step"]
        ps = f"{r['per_step']:.2f}" if r["per_step"] is not None else "-"
        ex = "" if r["per_step"] is None or r["steps"] >= FULL_STEPS else " (extrapolated)"
        lines.append(
            f"  {r['tool']:18} {r['seconds']:9.2f} {ps:>8} {call20:10.1f} {r['peak_mb']:8.0f}  {r['build_s']:.0f}{ex}"
        )
        if r.get("batch_per_call") is not None:
            lines.append(
                f"  {'':18} batched ×{r['batch']}: {r['batch_per_call']:.2f} s/call, "
                f"{r['batch_per_call'] / r['seconds']:.2f}× one call alone"
            )
        rows.append(
            {
                "machine": "gpu" if device.startswith("cuda") else "cpu",
                "tool": r["tool"],
                "seconds_per_call": f"{call20:.4g}",
                "seconds_per_step": "" if r["per_step"] is None else f"{r['per_step']:.4g}",
                "steps_timed": r["steps"],
                "peak_mb": f"{r['peak_mb']:.0f}",
                "source": "measured" if not ex else "extrapolated",
                "n": 1,
            }
        )
    if write and rows:
        _write_rows(rows)
        lines.append(f"wrote {len(rows)} rows to {DEVICES_CSV.relative_to(ROOT)}")
    return "\n".join(lines)


def _write_rows(rows: list[dict[str, Any]]) -> None:
    old: list[dict[str, str]] = []
    if DEVICES_CSV.exists():
        with open(DEVICES_CSV, newline="", encoding="utf-8") as f:
            old = list(csv.DictReader(f))
    mine = {(r["machine"], r["tool"]) for r in rows}
    keep = [r for r in old if (r["machine"], r["tool"]) not in mine]
    with open(DEVICES_CSV, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(sorted([*keep, *rows], key=lambda r: (r["machine"], r["tool"])))


HELP = "neural tools at real size with random weights: seconds per call and per diffusion step, peak memory"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", default="cpu", help="cpu, cuda, mps")
    p.add_argument("--steps", type=int, default=2, help="diffusion steps timed (use 20 on a GPU)")
    p.add_argument("--write", action="store_true", help="record rows in tool_tables/benchmark_devices.csv")
    p.add_argument("--tools", help="comma-separated subset of " + ",".join(TOOLS))
    p.add_argument("--batch", type=int, default=8, help="calls per batch for the tools that batch (1: no batch timing)")


def run(args: argparse.Namespace) -> int:
    chosen = tuple(t.strip() for t in args.tools.split(",")) if args.tools else TOOLS
    if set(chosen) - set(TOOLS) or args.steps < 1 or args.batch < 1:
        raise InputError(f"--tools must name some of {', '.join(TOOLS)}, and --steps and --batch be >= 1")
    print(run_neural_bench(args.device, args.steps, args.write, chosen, args.batch))
    return 0


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--one", required=True, choices=TOOLS)
    p.add_argument("--device", default="cpu")
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--batch", type=int, default=8)
    a = p.parse_args()
    print(json.dumps(_one(a.one, a.device, a.steps, a.batch)))
