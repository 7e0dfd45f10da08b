"""What every check receives besides the images, and the signature every check follows.

Kept apart from the package's `__init__` (which imports the check modules to list them) so that the check modules
import these records without an import cycle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from costa.types import EditState, Subtask, TextRegion, ToolOutput, Verdict


class TextReader(Protocol):
    """Anything that reads text lines from an RGB uint8 image (the OCR tool's engine in production)."""

    def read(self, image: object) -> tuple[TextRegion, ...]: ...


@dataclass(frozen=True)
class CheckContext:
    """What checks may use besides the images: an OCR reader for text checks."""

    reader: TextReader


CheckFn = Callable[[CheckContext, Subtask, EditState, EditState, ToolOutput], Verdict]
