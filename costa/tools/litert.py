"""TensorFlow Lite models run by `ai-edge-litert` (numpy 2 friendly), shared by the MediaPipe tools.

The `.tflite` files come from mediapipe's wheel (requirements-nodeps.txt, found by costa.models.weights without
importing mediapipe); `ai_edge_litert` is imported only here, inside `load_interpreter`, the first time a tool runs.
An interpreter is not thread-safe, so each call holds its model's lock while it sets the input, invokes and reads.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from costa.errors import ToolError
from costa.tools.neural import NeuralTool

#: Threads an interpreter uses (the build machines have 2 cores; the models are small).
THREADS = 2


@dataclass
class TfliteModel:
    """One loaded `.tflite` model: its interpreter, input side (height, width) and a lock around calls."""

    interpreter: Any
    input_hw: tuple[int, int]
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, batch: np.ndarray) -> list[np.ndarray]:
        """Run one float32 NHWC batch; every output tensor, in the model's output order."""
        it = self.interpreter
        with self.lock:
            it.set_tensor(it.get_input_details()[0]["index"], np.ascontiguousarray(batch, dtype=np.float32))
            it.invoke()
            return [np.array(it.get_tensor(d["index"])) for d in it.get_output_details()]


def load_interpreter(path: Path) -> TfliteModel:
    """A LiteRT interpreter over the `.tflite` file at `path`, tensors allocated.

    Raises:
        ToolError: the file is not a model LiteRT can load.
    """
    from ai_edge_litert.interpreter import Interpreter

    try:
        it = Interpreter(model_path=str(path), num_threads=THREADS)
        it.allocate_tensors()
    except (ValueError, RuntimeError) as e:
        raise ToolError(f"cannot load {path.name} with ai-edge-litert: {e}") from e
    shape = it.get_input_details()[0]["shape"]
    return TfliteModel(it, (int(shape[1]), int(shape[2])))


class LiteRtTool(NeuralTool):
    """A tool backed by one or more of its row's `.tflite` weights, shared through the process's model cache."""

    def model(self, index: int = 0) -> TfliteModel:
        path = self.weights_path(index)
        model: TfliteModel = self.cache().get(("litert", str(path)), lambda: load_interpreter(path))
        return model

    def load(self) -> None:
        for i in range(len(self.spec.requirements.weights)):
            self.model(i)
