"""Closed-set detector, depth, CLIP and BLIP tools on tiny random-weight models (FAKE weights: real classes, real
hub-snapshot layouts in a temporary COSTA_MODELS_DIR, random values; the RT-DETR fake's class heads are biased
towards "dog" and the BLIP fake's towards words, see `costa.testing.neural_readouts`).

What is tested is the plumbing: readiness and doctor lines, loading through the resolver and `from_pretrained`, the
artifacts' types and sizes, the label matching and its deterministic refusal, verification records, checks, the
search routing around a refusal, and the CLI's events and ledger. The answers themselves are noise.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from costa.errors import GroundingError
from costa.types import EditState, Plan, Subtask

pytestmark = pytest.mark.neural
ROOT = Path(__file__).resolve().parents[1]
TOOLS = ("rtdetr_detect", "midas", "depth_anything", "clip_consistency", "blip_caption")
REPOS = {
    "rtdetr_detect": "PekingU/rtdetr_r50vd_coco_o365",
    "midas": "Intel/dpt-hybrid-midas",
    "depth_anything": "depth-anything/Depth-Anything-V2-Small-hf",
    "clip_consistency": "openai/clip-vit-base-patch32",
    "blip_caption": "Salesforce/blip-image-captioning-base",
}


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from costa.testing import neural_models
    from costa.testing import neural_readouts as fake

    d = tmp_path_factory.mktemp("models")
    neural_models.build_grounding_dino(d)  # where the closed-set detector's refusals are routed
    fake.build_rtdetr(d)
    fake.build_dpt_hybrid(d)
    fake.build_depth_anything(d)
    fake.build_clip(d)
    fake.build_blip(d)
    return d


@pytest.fixture(scope="module")
def services(models_dir: Path):
    """One Services (one model cache) for the in-process tests, so each tiny model loads once."""
    from costa.config import Settings
    from costa.services import Services

    env = {**os.environ, "COSTA_MODELS_DIR": str(models_dir), "COSTA_DEVICE": "cpu", "HF_HUB_OFFLINE": "1"}
    return Services(Settings.from_env(env))


def _scene(h: int = 240, w: int = 320) -> np.ndarray:
    img = np.full((h, w, 3), 180, np.uint8)
    img[h // 3 : 2 * h // 3, w // 3 : 2 * w // 3] = (120, 80, 40)
    return img


def test_tools_are_ready_with_their_snapshots_and_loaded_through_from_pretrained(services) -> None:
    for tid in TOOLS:
        assert services.why_not(tid) is None, (tid, services.why_not(tid))
        spec = services.tables.tools[tid]
        assert spec.requirements.weights == (REPOS[tid],)


@pytest.mark.parametrize(
    ("tool_id", "gone"),
    [
        ("rtdetr_detect", "model.safetensors"),
        ("midas", "preprocessor_config.json"),
        ("clip_consistency", "tokenizer_config.json"),
        ("blip_caption", "config.json"),
    ],
)
def test_a_missing_file_gives_the_exact_doctor_line(models_dir: Path, tmp_path: Path, tool_id: str, gone: str) -> None:
    from costa.config import Settings
    from costa.services import Services

    repo = REPOS[tool_id]
    broken = tmp_path / "models"
    shutil.copytree(models_dir / repo, broken / repo)
    (broken / repo / gone).unlink()
    why = Services(Settings.from_env({**os.environ, "COSTA_MODELS_DIR": str(broken)})).why_not(tool_id)
    alternatives = {
        "model.safetensors": "model.safetensors or pytorch_model.bin",
        "preprocessor_config.json": "preprocessor_config.json or processor_config.json",
    }
    assert why == (
        f"weights {repo} incomplete in {broken / repo}/: missing {alternatives.get(gone, gone)}; put a hub snapshot "
        f"(config, weights, processor files) there or run `python -m costa models pull {repo}`"
    )


def test_doctor_lists_the_new_tools_ready(models_dir: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COSTA_MODELS_DIR": str(models_dir), "COSTA_DEVICE": "cpu"}
    proc = subprocess.run(
        [sys.executable, "-m", "costa", "doctor"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    rows = {ln.split()[1]: ln.split() for ln in proc.stdout.splitlines() if len(ln.split()) >= 3}
    for tid in TOOLS:
        assert rows[tid][::2] == ["ready", "neural"], rows.get(tid)  # status, id, backend and no reason after


def test_closed_set_detector_finds_a_coco_class_and_verifies_it(services) -> None:
    tool = services.tool("rtdetr_detect")
    out = tool(EditState(_scene()), Subtask(id="s", kind="object_detection", target="the dogs"), {})
    boxes = out.artifacts["boxes"]
    assert boxes and all(b.label == "dog" and 0.5 <= b.score <= 1.0 for b in boxes)
    assert all(b.x >= 0 and b.x2 <= 320 and b.y >= 0 and b.y2 <= 240 for b in boxes)
    record = boxes[0].verification
    assert record is not None and record.ok and record.method == "rtdetr_detect"
    assert [(e.aspect, e.value) for e in record.verified][:1] == [("class", "dog")]
    assert "verified class 'dog'" in out.notes
    left = tool(EditState(_scene()), Subtask(id="s", kind="object_detection", target="the dog on the left"), {})
    (only,) = left.artifacts["boxes"]
    assert only.x == min(b.x for b in boxes)  # the position word chose among the detections


def test_a_detr_snapshot_loads_through_the_same_tool(tmp_path: Path) -> None:
    """DETR (transformers ResNet backbone, no timm) in the row's folder: the same class, loader and post-processing."""
    from costa.config import Settings
    from costa.services import Services
    from costa.testing.neural_readouts import build_detr

    build_detr(tmp_path)
    fresh = Services(Settings.from_env({**os.environ, "COSTA_MODELS_DIR": str(tmp_path), "COSTA_DEVICE": "cpu"}))
    out = fresh.tool("rtdetr_detect")(EditState(_scene()), Subtask(id="s", kind="object_detection", target="dog"), {})
    assert out.artifacts["boxes"] and all(b.label == "dog" for b in out.artifacts["boxes"])
    assert type(fresh.tool("rtdetr_detect").model()[1]).__name__ == "DetrForObjectDetection"


def test_a_noun_outside_coco_is_refused_deterministically(services) -> None:
    tool = services.tool("rtdetr_detect")
    with pytest.raises(GroundingError) as e:
        tool(EditState(_scene()), Subtask(id="s", kind="object_detection", target="the yogurt"), {})
    assert e.value.deterministic and "'yogurt' is not one of them" in str(e.value)
    assert "80 classes" in str(e.value) and "Grounding DINO" in e.value.advice


def test_label_matching_uses_plurals_two_word_labels_synonyms_and_people_words() -> None:
    from costa.testing.neural_readouts import COCO_ID2LABEL
    from costa.tools.detr import match_label

    cases = {
        "the cups of coffee": "cup",
        "the red traffic light": "traffic light",
        "the hot dog": "hot dog",
        "the sofa": "couch",
        "the woman on the left": "person",
        "two buses": "bus",
        "the phone": "cell phone",
        "the knives": "knife",
        "the tower": None,
        "it": None,
    }
    assert {t: match_label(t, COCO_ID2LABEL) for t in cases} == cases


def test_search_routes_from_a_refusal_to_grounding_dino(services) -> None:
    """A non-COCO noun: the closed-set detector refuses once (no retry with a lower threshold), Grounding DINO runs."""
    from costa.agent import run_turn
    from costa.events import ToolFailed, ToolFinished
    from costa.turn.records import TurnConfig

    plan = Plan(subtasks=(Subtask(id="s1", kind="object_detection", target="the yogurt"),))
    # alpha 2: cost only, so the cheaper closed-set detector (table: 0.05 s vs 0.119 s) is tried first
    evs = list(run_turn(services, _scene(), plan, TurnConfig(alpha=2.0, threshold=0.0)))
    (refused,) = [e for e in evs if isinstance(e, ToolFailed) and e.tool == "rtdetr_detect"]
    assert "not retried, the refusal does not depend on parameters" in refused.reason
    assert "'yogurt' is not one of them" in refused.reason
    finished = [(e.tool, e.passed) for e in evs if isinstance(e, ToolFinished)]
    assert finished[0] == ("rtdetr_detect", False) and finished[-1] == ("grounding_dino", True)


@pytest.mark.parametrize("tool_id", ["midas", "depth_anything"])
def test_depth_is_a_map_of_the_image_size_farther_larger(services, tool_id: str) -> None:
    from costa.checks import CheckContext, check_step

    image = _scene(150, 260)
    state = EditState(image)
    sub = Subtask(id="s", kind="depth_estimation")
    out = services.tool(tool_id)(state, sub, {})
    depth = out.artifacts["depth"]
    assert out.image is None and depth.dtype == np.float32 and depth.shape == (150, 260)
    assert float(depth.min()) == 0.0 and float(depth.max()) == 1.0
    assert "260×150" in out.notes
    after = EditState(image, {"depth": depth})
    spec = services.tables.subtasks["depth_estimation"]
    verdict = check_step(CheckContext(reader=None), spec, sub, ("depth",), state, after, out)  # type: ignore[arg-type]
    assert verdict.quality == 1.0, verdict.reasons


def test_depth_orientation_is_inverted_from_the_models_inverse_depth() -> None:
    from costa.tools.depth import farther_is_larger

    inv = np.array([[10.0, 5.0], [1.0, 1.0]])  # the model: larger = nearer
    d = farther_is_larger(inv)
    assert d[0, 0] == 0.0 and d[1, 0] == 1.0 and 0.0 < d[0, 1] < 1.0
    assert not farther_is_larger(np.full((3, 3), 2.0)).any()


def test_clip_consistency_labels_by_the_similarity_threshold(services) -> None:
    tool = services.tool("clip_consistency")
    state = EditState(_scene())
    sub = Subtask(id="s", kind="caption_consistency_check", target="a photo of a red dog")
    low = tool(state, sub, {"min_similarity": -1.0})
    high = tool(state, sub, {"min_similarity": 1.0})
    assert low.artifacts["label"] == "consistent" and high.artifacts["label"] == "inconsistent"
    sim = float(low.notes.split("similarity ")[1].split()[0])
    assert -1.0 <= sim <= 1.0 and f"{sim:.3f}" in high.notes  # the same similarity both times


def test_blip_captions_and_the_cli_records_events_and_ledger(models_dir: Path, tmp_path: Path) -> None:
    from PIL import Image

    src, events = tmp_path / "in.png", tmp_path / "events.jsonl"
    Image.fromarray(_scene()).save(src)
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "COSTA_MODELS_DIR": str(models_dir),
        "COSTA_DEVICE": "cpu",
        "HF_HUB_OFFLINE": "1",
        "OPENAI_BASE_URL": "",
        "OPENAI_API_KEY": "",
        "COSTA_HOME": str(tmp_path / "home"),
    }
    cmd = [
        sys.executable,
        "-m",
        "costa",
        "edit",
        str(src),
        "caption this image",
        "-o",
        str(tmp_path / "out.png"),
        "--no-reflect",
        "--events",
    ]
    proc = subprocess.run([*cmd, str(events)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    evs = [json.loads(line) for line in events.read_text().splitlines()]
    finished = [e for e in evs if e["kind"] == "tool_finished"]
    assert [(e["tool"], e["passed"]) for e in finished] == [("blip_caption", True)]
    assert next(e for e in evs if e["kind"] == "tool_started")["params"] == {"max_tokens": 30, "beams": 3}
    done = next(e for e in evs if e["kind"] == "subtask_done")
    caption = done["result"]
    assert done["tools"] == ["blip_caption"] and caption and caption[0].isupper() and caption in proc.stdout
    assert "a caption of" in finished[0]["reasons"][0]
    assert "answer not verified: only its form was checked" in proc.stdout  # a caption has no reference here
    ledger = proc.stdout.split("cost ledger:")[1]
    assert "blip_caption" in ledger and "pass" in ledger


def _images(n: int) -> list[EditState]:
    rng = np.random.default_rng(0)
    return [EditState(rng.integers(0, 255, (96 + 16 * i, 128, 3), dtype=np.uint8)) for i in range(n)]


def test_clip_answers_a_batch_as_it_answers_each_call_and_refuses_only_the_bad_call(services) -> None:
    """One forward pass for the batch (the Ray runner's batching, `Tool.call_batch`); captions of other lengths are
    padded with the attention mask, so each call's similarity is the one it gets alone."""
    from costa.errors import ToolError
    from costa.types import ToolCall

    tool = services.tool("clip_consistency")
    assert tool.batches
    captions = ["a red dog", "a photo of a small grey house by the sea", "", "a cat"]
    calls = [
        ToolCall(state, Subtask(id=f"s{i}", kind="caption_consistency_check", target=c), {"min_similarity": 0.0})
        for i, (state, c) in enumerate(zip(_images(4), captions, strict=True))
    ]
    together = tool.call_batch(calls)
    assert isinstance(together[2], ToolError) and "needs the caption" in str(together[2])
    for call, got in zip(calls, together, strict=True):
        if call.subtask.target:
            alone = tool(call.state, call.subtask, call.params)
            sim = float(alone.notes.split("similarity ")[1].split()[0])
            assert got.notes.split("similarity ")[1].split()[0] == f"{sim:.3f}", (got.notes, alone.notes)
            assert got.artifacts == alone.artifacts
    refused = tool.call_batch([ToolCall(_images(1)[0], calls[0].subtask, {"min_similarity": 7.0})])
    assert "min_similarity" in str(refused[0])  # a parameter outside its declared range: that call's error


def test_blip_captions_a_batch_as_each_image_alone(services) -> None:
    from costa.types import ToolCall

    tool = services.tool("blip_caption")
    assert tool.batches
    sub = Subtask(id="s", kind="image_captioning")
    calls = [ToolCall(state, sub, {"max_tokens": 8, "beams": 1}) for state in _images(3)]
    together = tool.call_batch(calls)
    alone = [tool(c.state, c.subtask, c.params) for c in calls]
    assert [o.artifacts["caption"] for o in together] == [o.artifacts["caption"] for o in alone]


def _count_passes(model: Any) -> tuple[list[int], Any]:
    """(a list that grows by the batch size of each forward pass of `model`, the hook's handle to remove)."""
    sizes: list[int] = []

    def hook(module: Any, args: Any, kwargs: Any) -> None:
        first = kwargs.get("pixel_values", args[0] if args else None)
        sizes.append(int(first.shape[0]))

    return sizes, model.register_forward_pre_hook(hook, with_kwargs=True)


def _same_answer(got: Any, alone: Any) -> None:
    """A batched call's result is the lone call's: the same error, or the same boxes (to a pixel and 1e-4 in score)
    or depth map (to 1e-4); batched float arithmetic may differ in the last bits."""
    if isinstance(alone, Exception):
        assert type(got) is type(alone) and str(got) == str(alone)
        return
    assert not isinstance(got, Exception), got
    if "boxes" in alone.artifacts:
        a, b = alone.artifacts["boxes"], got.artifacts["boxes"]
        assert [x.label for x in a] == [x.label for x in b]
        for x, y in zip(a, b, strict=True):
            assert max(abs(x.x - y.x), abs(x.y - y.y), abs(x.w - y.w), abs(x.h - y.h)) <= 1
            assert abs(x.score - y.score) < 1e-4
    else:
        assert np.abs(alone.artifacts["depth"] - got.artifacts["depth"]).max() < 1e-4


def _outcome(tool: Any, call: Any) -> Any:
    try:
        return tool(call.state, call.subtask, call.params)
    except Exception as e:  # the lone call's refusal, compared with its place in the batch
        return e


@pytest.mark.parametrize(
    ("tool_id", "kind", "targets", "passes"),
    [
        # RT-DETR's processor brings every image to 640×640: one pass; "unicorn" is refused before the model
        ("rtdetr_detect", "object_detection", ["dog", "the dogs", "unicorn", "a dog"], [3]),
        # Grounding DINO: one pass per (image size, prompt length); "" names nothing and is refused
        ("grounding_dino", "object_detection", ["dog", "cat", "", "red car"], None),
        ("midas", "depth_estimation", [None, None, None, None], None),
        ("depth_anything", "depth_estimation", [None, None, None, None], None),
    ],
)
def test_served_readouts_answer_a_batch_as_each_call_alone_in_fewer_passes(
    services, tool_id: str, kind: str, targets: list[str | None], passes: list[int] | None
) -> None:
    """The Ray runner's batching (`Tool.call_batch`) for the detectors and depth: calls whose model inputs have one
    shape share a forward pass, nothing is padded, and each call gets the answer (or the error) it gets alone."""
    from PIL import Image

    from costa.types import ToolCall

    tool = services.tool(tool_id)
    assert tool.batches
    rng = np.random.default_rng(3)
    sizes = [(96, 128), (96, 128), (128, 96), (96, 128)]  # two share a size; the third is turned
    calls = [
        ToolCall(
            EditState(rng.integers(0, 255, (*hw, 3), dtype=np.uint8)),
            Subtask(id=f"s{i}", kind=kind, target=t),
            {"threshold": 0.0} if tool_id == "rtdetr_detect" else {},
        )
        for i, (hw, t) in enumerate(zip(sizes, targets, strict=True))
    ]
    alone = [_outcome(tool, c) for c in calls]
    processor, model = tool.model()
    counted, hook = _count_passes(model)
    try:
        together = tool.call_batch(calls)
    finally:
        hook.remove()
    for got, lone in zip(together, alone, strict=True):
        _same_answer(got, lone)
    if passes is None:  # one pass per distinct processed shape among the calls the tool takes
        shapes = []
        for c in calls:
            if tool_id == "grounding_dino" and not c.subtask.target:
                continue
            text = {"text": c.subtask.target + "."} if tool_id == "grounding_dino" else {}
            done = processor(images=Image.fromarray(c.state.image), return_tensors="pt", **text)
            shapes.append(tuple(tuple(v.shape) for v in done.values() if hasattr(v, "shape")))
        passes = [shapes.count(s) for s in dict.fromkeys(shapes)]
    assert counted == passes and len(counted) < sum(counted)  # fewer passes than calls through the model
    assert sum(counted) == sum(1 for a in alone if not isinstance(a, Exception) or "found no" in str(a))
