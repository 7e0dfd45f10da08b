"""A per-turn memo in front of the OCR reader, so the reflection experts re-run a subtask's checks without reading the
same pixels twice (OCR is most of a text turn's seconds on a CPU)."""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from costa.types import TextRegion

#: Images remembered per turn (each entry holds only the regions read, not the image).
MEMO_SIZE = 64


@dataclass
class MemoReader:
    """Read through `reader`, remembering the regions read for each distinct image (by shape and content hash)."""

    reader: Any
    _seen: dict[tuple[tuple[int, ...], bytes], tuple[TextRegion, ...]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def read(self, image: Any) -> tuple[TextRegion, ...]:
        arr = np.ascontiguousarray(image)
        key = (arr.shape, hashlib.blake2b(arr.tobytes(), digest_size=16).digest())
        with self._lock:
            hit = self._seen.get(key)
        if hit is not None:
            return hit
        regions = tuple(self.reader.read(image))
        with self._lock:
            if len(self._seen) >= MEMO_SIZE:
                self._seen.pop(next(iter(self._seen)))
            self._seen[key] = regions
        return regions

    def __getattr__(self, name: str) -> Any:  # the rest of the reader's interface, unchanged
        return getattr(self.reader, name)
