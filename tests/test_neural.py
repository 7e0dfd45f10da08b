"""Neural tools on tiny random-weight models (FAKE weights: real classes, real on-disk layouts, random values).

The models are built once per module into a temporary COSTA_MODELS_DIR by `costa.testing.neural_models` and loaded
through the same resolver and loaders real weights use. Their outputs are noise: what is tested is the plumbing —
readiness and doctor lines, the Grounding DINO → SAM → inpainting pipeline, events, ledger, seeds, progress, Stop,
out-of-memory handling, unloading, and pixels outside the edit left bit-for-bit unchanged.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pytest

from costa.errors import ToolError
from costa.types import Box, EditState, Mask, Plan, Point, Subtask

pytestmark = pytest.mark.neural
ROOT = Path(__file__).resolve().parents[1]
TINY_TOOLS = ("grounding_dino", "sam", "sam_points", "sd_inpaint", "sd_add_object", "sd_outpaint", "instruct_pix2pix")


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from costa.testing import neural_models as synthetic

    d = tmp_path_factory.mktemp("models")
    synthetic.build_grounding_dino(d)
    synthetic.build_sam(d)
    synthetic.build_sd_inpaint(d)
    synthetic.build_instruct_pix2pix(d)
    return d


@pytest.fixture
def neural_env(models_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COSTA_MODELS_DIR", str(models_dir))
    monkeypatch.setenv("COSTA_DEVICE", "cpu")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return models_dir


@pytest.fixture(scope="module")
def shared_services(models_dir: Path):
    """One Services (one model cache) for the in-process tests, so each tiny model loads once."""
    from costa.config import Settings
    from costa.services import Services

    env = {**os.environ, "COSTA_MODELS_DIR": str(models_dir), "COSTA_DEVICE": "cpu"}
    return Services(Settings.from_env(env))


def _scene(h: int = 240, w: int = 320) -> np.ndarray:
    img = np.full((h, w, 3), 180, np.uint8)
    img[h // 3 : 2 * h // 3, w // 3 : 2 * w // 3] = (120, 80, 40)
    return img


def test_doctor_shows_tiny_models_ready(neural_env: Path) -> None:
    from costa.services import Services

    services = Services()
    for tid in TINY_TOOLS:
        assert services.why_not(tid) is None, (tid, services.why_not(tid))


def test_missing_file_gives_a_clear_doctor_line(neural_env: Path, tmp_path: Path, monkeypatch) -> None:
    from costa.services import Services

    broken = tmp_path / "models"
    shutil.copytree(neural_env / "IDEA-Research", broken / "IDEA-Research")
    (broken / "IDEA-Research/grounding-dino-tiny/model.safetensors").unlink()
    monkeypatch.setenv("COSTA_MODELS_DIR", str(broken))
    why = Services().why_not("grounding_dino")
    assert why is not None
    assert f"{broken}/IDEA-Research/grounding-dino-tiny/" in why
    assert "missing model.safetensors or pytorch_model.bin" in why
    assert "models pull IDEA-Research/grounding-dino-tiny" in why
    why_sam = Services().why_not("sam")
    assert why_sam is not None and "facebook/sam-vit-base not found" in why_sam


def test_diffusion_tools_say_they_need_a_gpu_unless_forced(neural_env: Path, monkeypatch) -> None:
    from costa.services import Services
    from costa.tools.neural import gpu_visible

    if gpu_visible():
        pytest.skip("this machine has a GPU")
    monkeypatch.delenv("COSTA_DEVICE")
    why = Services().why_not("sd_inpaint")
    assert why is not None and "needs a CUDA or MPS GPU" in why and "COSTA_DEVICE=cpu" in why
    assert Services().why_not("grounding_dino") is None  # detection is fine on the CPU


def test_cli_edit_runs_grounding_dino_sam_inpainting_replacement(neural_env: Path, tmp_path: Path) -> None:
    """The whole neural chain through the CLI, checked and reflected on as every turn is. Named, the dog is grounded by
    the tiny random-weight Grounding DINO (a 13-px box in a corner) and SAM, whose speck of a mask the size rule
    refuses (noise is not a dog), so nothing is written. Brushed, the dog's region goes straight to Stable Diffusion,
    which paints noise there: the replacement's check refuses every attempt and nothing is written (before,
    `--threshold 0 --no-reflect` let every check pass, so this test could not fail)."""
    from PIL import Image

    src, out, events = tmp_path / "in.png", tmp_path / "out.png", tmp_path / "events.jsonl"
    image = _scene()
    Image.fromarray(image).save(src)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "costa", "edit", str(src), "replace the dog with a cat", "-o", str(out)]
    proc = subprocess.run([*cmd, "--events", str(events)], cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode == 2 and not out.exists(), proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "no tool path passed its checks" in proc.stderr and "nothing was written" in proc.stderr
    evs = [json.loads(line) for line in events.read_text().splitlines()]
    started = [e["tool"] for e in evs if e["kind"] == "tool_started"]
    assert started[:2] == ["grounding_dino", "sam"]
    refused = [e for e in evs if e["kind"] == "tool_failed" and e["tool"] == "sam"]
    assert refused and "below threshold" in refused[0]["reason"]

    mask = np.zeros(image.shape[:2], np.uint8)
    h, w = mask.shape
    mask[h // 3 : 2 * h // 3, w // 3 : 2 * w // 3] = 255  # the brown "dog"
    Image.fromarray(mask).save(tmp_path / "dog.png")
    brushed = [*cmd, "--mask", str(tmp_path / "dog.png"), "--events", str(events)]
    proc = subprocess.run(brushed, cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode == 2 and not out.exists(), proc.stdout[-2000:] + proc.stderr[-2000:]
    evs = [json.loads(line) for line in events.read_text().splitlines()]
    # The seed is the table's (attempt 0 → 0, its retry 1; the bundle rebuilds each call's params the same way).
    runs = [e["params"] for e in evs if e["kind"] == "tool_started" and e["tool"] == "sd_inpaint"]
    assert [(p["seed"], p["steps"]) for p in runs] == [(0, 20), (1, 20)]
    progress = [e for e in evs if e["kind"] == "tool_progress" and e["tool"] == "sd_inpaint" and e["attempt"] == 0]
    assert [p["done"] for p in progress] == list(range(1, progress[0]["total"] + 1))
    painted = [e for e in evs if e["kind"] == "tool_finished" and e["tool"] == "sd_inpaint"]
    assert painted and not any(e["passed"] for e in painted)  # noise is not a cat: every attempt refused, with why
    assert all(e["quality"] < 0.8 and e["reasons"] for e in painted)
    assert "cost ledger" in proc.stdout and evs[-1]["kind"] == "turn_done" and not evs[-1]["ok"]


def _removal_services(services):
    """The same services with the embedded removers switched off, so the search must use Stable Diffusion."""
    tools = dict(services.tables.tools)
    for tid in ("remove_patchmatch", "remove_telea"):
        tools[tid] = dataclasses.replace(tools[tid], status="planned")
    services.tables = dataclasses.replace(services.tables, tools=MappingProxyType(tools))
    return services


def test_removal_turn_then_stop_between_diffusion_steps(shared_services) -> None:
    from costa.agent import TurnEnv, run_turn
    from costa.events import PathChosen, ToolFailed, ToolFinished, TurnDone
    from costa.models.control import TurnControl
    from costa.turn.records import TurnConfig

    services = _removal_services(shared_services)
    plan = Plan(subtasks=(Subtask(id="s1", kind="object_removal", target="the dog"),))
    image = _scene()
    control = TurnControl()
    evs = list(run_turn(services, image, plan, TurnConfig(alpha=0.0, threshold=0.0), env=TurnEnv(control=control)))
    done = evs[-1]
    assert isinstance(done, TurnDone) and done.image is not None
    ran = [e.tool for e in evs if isinstance(e, ToolFinished)]
    assert ran[0] == "grounding_dino" and "sd_inpaint" in ran
    chosen = next(e for e in evs if isinstance(e, PathChosen))
    assert chosen.path[0][1] == "grounding_dino" and chosen.path[-1][1] == "sd_inpaint"
    assert sum(1 for e in control.events if e.kind == "tool_progress") >= 1

    def stop_at_two(ev) -> None:
        if ev.kind == "tool_progress" and ev.done == 2:
            stopper.stop.set()

    stopper = TurnControl(on_event=stop_at_two)
    evs = list(run_turn(services, image, plan, TurnConfig(alpha=0.0, threshold=0.0), env=TurnEnv(control=stopper)))
    steps = [e.done for e in stopper.events if e.kind == "tool_progress"]
    assert steps == [1, 2]  # the call ended between diffusion steps 2 and 3
    stopped = [e for e in evs if isinstance(e, ToolFinished) and e.stopped]  # stopped, not a failure of the tool
    assert len(stopped) == 1 and not stopped[0].passed and "stopped" in stopped[0].reasons[0]
    # the stopped call is not a failure of Stable Diffusion (the tiny grounders' failures on a 13-px box are theirs)
    assert not [e for e in evs if isinstance(e, ToolFailed) and e.tool == "sd_inpaint"]
    assert evs[-1].image is None


def test_large_image_outside_the_feather_is_bit_identical_and_seeds_reproduce(shared_services) -> None:
    tool = shared_services.tool("sd_inpaint")
    h, w = 3000, 4000
    rng = np.random.default_rng(1)
    image = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    mask = np.zeros((h, w), bool)
    mask[1200:1500, 2000:2400] = True
    state = EditState(image, {"masks": (Mask(mask, "dog"),)})
    sub = Subtask(id="s1", kind="object_replacement", target="dog", result="a cat")
    params = {"seed": 7, "steps": 2, "feather_px": 8}
    a = tool(state, sub, params)
    b = tool(state, sub, params)
    c = tool(state, sub, {**params, "seed": 8})
    assert a.image is not None and b.image is not None and c.image is not None
    assert np.array_equal(a.image, b.image)  # same seed, same pixels
    assert not np.array_equal(a.image, c.image)
    changed = (a.image != image).any(axis=2)
    assert changed[mask].mean() > 0.5
    from costa.masks import dilate_mask

    assert not changed[~dilate_mask(mask, 8)].any()  # every pixel outside the feather is untouched
    assert a.edited_region is not None and not (changed & ~a.edited_region).any()


def test_out_of_memory_is_a_recorded_failure_and_unloads(shared_services, monkeypatch) -> None:
    import torch

    from costa.tools.inpaint import SdInpaintTool

    tool = shared_services.tool("sd_inpaint")
    tool.ensure_loaded()
    assert any(k[0] == "sd_inpaint" for k in shared_services.models.loaded())

    def oom(*a, **k):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(SdInpaintTool, "inpaint", oom)
    mask = np.zeros((240, 320), bool)
    mask[80:160, 100:200] = True
    state = EditState(_scene(), {"masks": (Mask(mask),)})
    with pytest.raises(ToolError, match="ran out of cpu memory; its model was unloaded"):
        tool(state, Subtask(id="s1", kind="object_removal", target="dog"), {})
    assert not any(k[0] == "sd_inpaint" for k in shared_services.models.loaded())


def test_one_model_is_shared_and_sam_takes_clicks(shared_services) -> None:
    box_tool, click_tool = shared_services.tool("sam"), shared_services.tool("sam_points")
    image = _scene()
    out = box_tool(
        EditState(image, {"boxes": (Box(100, 80, 100, 80, "dog"),)}), Subtask(id="s", kind="object_segmentation"), {}
    )
    (m,) = out.artifacts["masks"]
    assert m.data.shape == (240, 320) and not m.data[:60].any()  # kept within the box grown by 10 %
    pts = (Point(150, 120), Point(5, 5, positive=False))
    out2 = click_tool(EditState(image, {"points": pts}), Subtask(id="s", kind="object_segmentation", target="dog"), {})
    assert len(out2.artifacts["masks"]) == 1
    assert sum(1 for k in shared_services.models.loaded() if k[0] == "sam") == 1


def test_add_outpaint_and_scenery(shared_services) -> None:
    image = _scene()
    add = shared_services.tool("sd_add_object")(
        EditState(image, {"boxes": (Box(20, 20, 60, 60),)}),
        Subtask(id="s", kind="object_addition", result="a cup"),
        {"steps": 2},
    )
    assert add.image is not None and not (add.image != image).any(axis=2)[150:].any()
    out = shared_services.tool("sd_outpaint")(
        EditState(image), Subtask(id="s", kind="outpainting", result="16:9"), {"steps": 2}
    )
    assert out.image is not None and out.image.shape[1] > 320
    top, left = (out.image.shape[0] - 240) // 2, (out.image.shape[1] - 320) // 2
    assert np.array_equal(out.image[top : top + 240, left : left + 320], image)  # the original is kept exactly
    pix = shared_services.tool("instruct_pix2pix")
    sub = Subtask(id="s", kind="changing_scenery", result="winter")
    a, b = pix(EditState(image), sub, {"steps": 2}), pix(EditState(image), sub, {"steps": 2})
    assert a.image is not None and a.image.shape == image.shape and np.array_equal(a.image, b.image)


def test_model_cache_unloads_least_recently_used_over_budget() -> None:
    from costa.models.cache import ModelCache

    class Fake:
        def __init__(self, n: int) -> None:
            self.n = n

        def parameters(self):
            return [np.zeros(self.n, np.float32).view(np.uint8)]

        def buffers(self):
            return []

    class Arr:  # numel/element_size like a torch tensor
        pass

    cache = ModelCache(budget_bytes=100)
    sizes = {"a": 40, "b": 40, "c": 40}
    made = []

    def loader(k):
        made.append(k)
        return k

    import costa.models.cache as cm

    real = cm.model_bytes
    cm.model_bytes = lambda m: sizes[m]  # sizes by name: the cache's policy is under test, not byte counting
    try:
        cache.get("a", lambda: loader("a"))
        cache.get("b", lambda: loader("b"))
        cache.get("a", lambda: loader("a"))  # a is now the most recently used
        cache.get("c", lambda: loader("c"))
    finally:
        cm.model_bytes = real
    assert made == ["a", "b", "c"] and cache.loaded() == ["a", "c"] and cache.unloads == ["b"]


def test_segment_anything_backend_needs_torchvision(neural_env: Path) -> None:
    import importlib.util

    from costa.services import Services

    if importlib.util.find_spec("torchvision") is not None:
        pytest.skip("torchvision is installed: the segment-anything path runs in the GPU install's tests")
    why = Services().why_not("sam_segment_anything")
    assert why is not None and "torchvision" in why


@pytest.mark.skipif(
    __import__("importlib").util.find_spec("torchvision") is None,
    reason="segment_anything imports torchvision, whose registry wheels need the CUDA torch (GPU install only)",
)
def test_segment_anything_runs_with_a_vit_b_checkpoint(tmp_path: Path, monkeypatch) -> None:
    import torch
    from segment_anything import sam_model_registry

    from costa.services import Services

    torch.save(sam_model_registry["vit_b"]().state_dict(), tmp_path / "sam_vit_b_01ec64.pth")
    monkeypatch.setenv("COSTA_MODELS_DIR", str(tmp_path))
    tool = Services().tool("sam_segment_anything")
    out = tool(
        EditState(_scene(), {"boxes": (Box(100, 80, 100, 80, "dog"),)}), Subtask(id="s", kind="object_segmentation"), {}
    )
    assert out.artifacts["masks"][0].data.shape == (240, 320)


@pytest.mark.parametrize("tool_id", ["sam", "sam_points"])
def test_sam_encodes_a_batch_of_images_in_one_pass_and_answers_each_call_as_alone(shared_services, tool_id) -> None:
    """The Ray runner's batching (`Tool.call_batch`): the processor brings every image to 1024×1024, so the image
    encoder (nearly all of SAM's cost) runs once for the batch; each call's own prompts then give the masks it gets
    alone. A call with nothing to segment from is refused alone."""
    from costa.errors import ToolError
    from costa.types import ToolCall

    tool = shared_services.tool(tool_id)
    assert tool.batches
    pointing = (
        [{"points": (Point(150, 120),)}, {"points": (Point(60, 50), Point(5, 5, positive=False))}, {}]
        if tool_id == "sam_points"
        else [
            {"boxes": (Box(100, 80, 100, 80, "dog"),)},
            {"boxes": (Box(10, 10, 50, 40, "a"), Box(70, 60, 40, 40, "b"))},
            {},
        ]
    )
    calls = [
        ToolCall(EditState(_scene(*hw), art), Subtask(id=f"s{i}", kind="object_segmentation", target="dog"), {})
        for i, (hw, art) in enumerate(zip([(240, 320), (160, 200), (240, 320)], pointing, strict=True))
    ]
    alone = [tool(c.state, c.subtask, c.params) for c in calls[:2]]
    _, model = tool.model()
    encoded: list[int] = []
    hook = model.vision_encoder.register_forward_hook(lambda m, args, out: encoded.append(int(args[0].shape[0])))
    try:
        together = tool.call_batch(calls)
    finally:
        hook.remove()
    assert encoded == [2]  # one pass over the two images with something to segment from
    assert isinstance(together[2], ToolError) and "no " in str(together[2])
    for got, lone in zip(together[:2], alone, strict=True):
        assert not isinstance(got, Exception), got
        a, b = lone.artifacts["masks"], got.artifacts["masks"]
        assert [m.label for m in a] == [m.label for m in b]
        for x, y in zip(a, b, strict=True):
            assert (x.data != y.data).mean() < 1e-3 and abs(x.score - y.score) < 1e-4
