"""The base of every neural tool: weights from the resolver, the device, models from the shared cache, OOM handling.

`missing()` says exactly why a neural tool cannot run (package, weights and where to put them, device) without
importing torch, so `costa doctor` and the app's start stay light. A GPU out-of-memory error during a call becomes a
`ToolError` (a recorded failure the search routes around) and the tool's models are unloaded first.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Callable, Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

from costa.errors import CostaError, ToolError
from costa.models.cache import ModelCache
from costa.models.device import Device, is_out_of_memory, probe_device
from costa.models.weights import describe_missing, locate, resolve
from costa.tools.base import Tool
from costa.types import EditState, Subtask, ToolCall, ToolOutput


def gpu_visible() -> bool:
    """A GPU torch could use is probably here (checked without importing torch)."""
    if Path("/dev/nvidia0").exists() or Path("/proc/driver/nvidia/gpus").is_dir():
        return True
    return sys.platform == "darwin" and platform.machine() == "arm64"


class NeuralTool(Tool):
    """A tool backed by local weights (the table row's `requirements.weights`) run with torch.

    `models` is the process-wide `ModelCache`, set by the services object (a tool built alone makes its own).
    """

    def __init__(self, spec: Any, **kwargs: Any) -> None:
        super().__init__(spec)
        self.models: ModelCache | None = None
        self._device: Device | None = None
        self._keys: set[Hashable] = set()

    # ------------------------------------------------------------------ readiness (no torch import)
    def missing(self) -> str | None:
        """Everything this tool still needs here (packages, weights and where to put them, GPU), or None.

        All problems are listed at once, so a user installing the extras learns about the weights in the same message.
        """
        problems = []
        base = super().missing()
        if base:
            problems.append(base)
        settings = self.current_settings()
        for model_id in self.spec.requirements.weights:
            status = locate(model_id, settings)
            if not status.present and not settings.allow_downloads:
                problems.append(describe_missing(status, settings))
        if self.spec.requirements.gpu and settings.device != "cpu" and not gpu_visible():
            problems.append(
                "needs a CUDA or MPS GPU and none was found (set COSTA_DEVICE=cpu to run it on the CPU anyway: "
                "minutes per call at full size)"
            )
        return "; ".join(problems) or None

    # ------------------------------------------------------------------ models
    def device(self) -> Device:
        if self._device is None:
            self._device = probe_device(self.current_settings().device)
        return self._device

    def cache(self) -> ModelCache:
        if self.models is None:
            self.models = ModelCache()
        return self.models

    def weights_path(self, index: int = 0) -> Path:
        """Local path of the row's `index`-th weights (downloaded first only when COSTA_ALLOW_DOWNLOADS=1)."""
        return resolve(self.spec.requirements.weights[index], self.current_settings())

    def shared_model(self, role: str, path: Path, loader: Callable[[Path, Device], Any]) -> Any:
        """The model `role` loaded from `path` on this tool's device, shared with every tool asking the same."""
        dev = self.device()
        key = (role, str(path), dev.name, dev.dtype)
        self._keys.add(key)
        return self.cache().get(key, lambda: loader(path, dev))

    def unload(self) -> None:
        """Drop this tool's models from the shared cache (others' models stay)."""
        for key in list(self._keys):
            self.cache().unload(key)
        self._keys.clear()

    def __call__(self, state: EditState, subtask: Subtask, params: Mapping[str, Any]) -> ToolOutput:
        try:
            return super().__call__(state, subtask, params)
        except (RuntimeError, MemoryError) as e:
            raise self._out_of_memory(e) from e

    def call_batch(self, calls: Sequence[ToolCall]) -> list[ToolOutput | CostaError]:
        """As `Tool.call_batch`; out of memory, every call of the batch gets the same `ToolError`."""
        try:
            return super().call_batch(calls)
        except (RuntimeError, MemoryError) as e:
            failed = self._out_of_memory(e)
            return [failed for _ in calls]

    def _out_of_memory(self, e: RuntimeError | MemoryError) -> ToolError:
        """The recorded failure for a GPU or host out-of-memory error (the models are unloaded first); any other
        error is ours and raises."""
        if not is_out_of_memory(e) and not isinstance(e, MemoryError):
            raise e
        self.unload()
        return ToolError(f"{self.spec.id} ran out of {self.device().name} memory; its model was unloaded")


def local_only(settings_allow_downloads: bool) -> dict[str, Any]:
    """`from_pretrained` keyword arguments: never reach the hub unless downloads are allowed."""
    return {} if settings_allow_downloads else {"local_files_only": True}


def to_device(batch: Mapping[str, Any], dev: Device) -> dict[str, Any]:
    """Move a processor's tensors to `dev`, floating-point ones in the device's dtype."""
    out: dict[str, Any] = {}
    dtype = dev.torch_dtype()
    for k, v in batch.items():
        if hasattr(v, "to"):
            v = v.to(dev.name)
            if v.is_floating_point():
                v = v.to(dtype)
        out[k] = v
    return out


def only(results: Sequence[ToolOutput | CostaError]) -> ToolOutput:
    """The one call's output of a batch of one, or its error raised (a batching tool's `run`)."""
    (out,) = results
    if isinstance(out, CostaError):
        raise out
    return out


def shape_groups(inputs: Sequence[Mapping[str, Any]], names: Sequence[str] | None = None) -> list[list[int]]:
    """Indices of processor outputs whose tensors (those in `names`; None: all) have the same names and shapes, groups
    in first-seen order.

    Such inputs stack into one batch with nothing padded, so each call in it gets the answer it gets alone (a model
    that pads images, such as Grounding DINO's, would otherwise change an answer with its neighbours).

    >>> import numpy as np
    >>> shape_groups([{"x": np.zeros((1, 3))}, {"x": np.zeros((1, 4))}, {"x": np.ones((1, 3))}])
    [[0, 2], [1]]
    """
    groups: dict[tuple[Any, ...], list[int]] = {}
    for i, batch in enumerate(inputs):
        key = tuple(sorted((k, tuple(v.shape)) for k, v in _tensors(batch, names).items()))
        groups.setdefault(key, []).append(i)
    return list(groups.values())


def stacked(inputs: Sequence[Mapping[str, Any]], names: Sequence[str] | None = None) -> dict[str, Any]:
    """Batches of one (a processor's tensors, batch dimension first; those in `names`, None: all) joined along that
    dimension."""
    import torch

    return {k: torch.cat([batch[k] for batch in inputs]) for k in _tensors(inputs[0], names)}


def _tensors(batch: Mapping[str, Any], names: Sequence[str] | None) -> dict[str, Any]:
    """The tensors (anything with a shape) of a processor's output, those in `names` only unless it is None."""
    return {k: v for k, v in batch.items() if hasattr(v, "shape") and (names is None or k in names)}


class ItemOf:
    """Item `index` of a model's batched outputs, as a batch of one: `ItemOf(out, 2).logits` is `out.logits[2:3]`.

    What a processor's post-processing reads (`outputs.logits`, `outputs.pred_boxes`, `outputs.predicted_depth`) is
    sliced when read, so one pass over a batch is read out call by call exactly as a lone call's outputs are.
    """

    def __init__(self, outputs: Any, index: int) -> None:
        self._outputs, self._index = outputs, index

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        value = getattr(self._outputs, name)
        return value[self._index : self._index + 1]


def run_grouped(
    calls: Sequence[ToolCall],
    prepare: Callable[[ToolCall], Mapping[str, Any]],
    forward: Callable[[dict[str, Any]], Any],
    readout: Callable[[ToolCall, Mapping[str, Any], Any], ToolOutput],
    batched: Sequence[str] | None = None,
) -> list[ToolOutput | CostaError]:
    """Several calls of a model through as few passes as `shape_groups` allows, each call's output or error in order.

    `prepare` makes one call's model inputs (a processor's tensors, a batch of one) or refuses the call with a
    `CostaError`; `forward` is one pass over stacked inputs; `readout` turns a call, its own inputs and its item of the
    pass's outputs (`ItemOf`) into its output, or refuses it. `batched` names the inputs that go through `forward`
    (None: all; SAM batches its images, and each call's prompts go to its own readout). A lone call takes the same
    path as a batch of one, so batching changes no answer. Anything else raised is ours, or an out-of-memory for
    `NeuralTool.call_batch`.
    """
    results: list[ToolOutput | CostaError | None] = [None] * len(calls)
    ready: list[tuple[int, Mapping[str, Any]]] = []
    for i, call in enumerate(calls):
        try:
            ready.append((i, prepare(call)))
        except CostaError as e:
            results[i] = e
    for group in shape_groups([inputs for _, inputs in ready], batched):
        members = [ready[g] for g in group]
        outputs = forward(stacked([inputs for _, inputs in members], batched))
        for j, (i, inputs) in enumerate(members):
            try:
                results[i] = readout(calls[i], inputs, ItemOf(outputs, j))
            except CostaError as e:
                results[i] = e
    done = [r for r in results if r is not None]
    assert len(done) == len(calls)  # every call got its output or its error above
    return done
