"""One process-wide cache of loaded models, shared by every tool, with a memory budget and LRU unloading.

Tools ask for a model by key (e.g. ("grounding_dino", "<path>", "cuda")): detection and grounding get the same
Grounding DINO, and every Stable Diffusion inpainting tool (remove, replace, add, recolour, outpaint) the same
pipeline. When loading a model would exceed the budget, the least recently used models are unloaded first. After a
GPU out-of-memory error the tool calls `unload(key)` so the next attempt starts from free memory.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from costa.models.device import free_accelerator_memory

log = logging.getLogger(__name__)


@dataclass
class _Entry:
    model: Any
    nbytes: int


def model_bytes(model: Any) -> int:
    """Bytes held by a torch module's parameters and buffers, or a diffusers pipeline's components (0 if unknown)."""
    modules = []
    if hasattr(model, "components"):  # a diffusers pipeline
        modules = [m for m in model.components.values() if hasattr(m, "parameters")]
    elif hasattr(model, "parameters"):
        modules = [model]
    elif isinstance(model, tuple):
        return sum(model_bytes(m) for m in model)
    total = 0
    for m in modules:
        total += sum(p.numel() * p.element_size() for p in m.parameters())
        total += sum(b.numel() * b.element_size() for b in m.buffers())
    return total


class ModelCache:
    """Loaded models by key, least recently used first out.

    budget_bytes: models held at once may not exceed this (None = no limit); one model larger than the budget is
        still loaded (alone), since refusing it would make the tool unusable.
    """

    def __init__(self, budget_bytes: int | None = None) -> None:
        self.budget_bytes = budget_bytes
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._lock = threading.RLock()
        self.loads = 0
        self.unloads: list[Hashable] = []

    def get(self, key: Hashable, loader: Callable[[], Any]) -> Any:
        """The model for `key`, loading it with `loader()` on first use (then unloading LRU models over budget)."""
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key].model
            model = loader()
            self.loads += 1
            self._entries[key] = _Entry(model, model_bytes(model))
            self._enforce_budget(keep=key)
            return model

    def _enforce_budget(self, keep: Hashable) -> None:
        if self.budget_bytes is None:
            return
        while self.held_bytes() > self.budget_bytes and len(self._entries) > 1:
            oldest = next(k for k in self._entries if k != keep)
            log.info("model cache over budget: unloading %s", oldest)
            self.unload(oldest)

    def held_bytes(self) -> int:
        with self._lock:
            return sum(e.nbytes for e in self._entries.values())

    def loaded(self) -> list[Hashable]:
        with self._lock:
            return list(self._entries)

    def unload(self, key: Hashable) -> bool:
        """Drop `key`'s model and return the accelerator's cached memory; False when it was not loaded."""
        with self._lock:
            entry = self._entries.pop(key, None)
            if entry is None:
                return False
            self.unloads.append(key)
            del entry
            free_accelerator_memory()
            return True

    def clear(self) -> None:
        with self._lock:
            for key in list(self._entries):
                self.unload(key)
