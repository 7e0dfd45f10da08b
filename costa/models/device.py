"""Which accelerator neural tools run on, and in which floating-point precision.

`probe_device` imports torch only when it is installed and only when called. COSTA_DEVICE (cpu, cuda, cuda:1, mps)
overrides the choice; otherwise CUDA, then Apple's MPS, then the CPU.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Device:
    """A torch device name, the dtype models load in, and what was found (for `costa doctor` and the status line).

    name: "cuda", "cuda:1", "mps" or "cpu". dtype: "float16" on CUDA/MPS, "float32" on the CPU (half precision is
    slow or unsupported there). memory_bytes: the accelerator's total memory, None when unknown (the CPU).
    forced: COSTA_DEVICE chose it.
    """

    name: str
    dtype: str
    detail: str
    memory_bytes: int | None = None
    forced: bool = False

    @property
    def is_gpu(self) -> bool:
        return self.name != "cpu"

    def torch_dtype(self):  # -> torch.dtype
        import torch

        return getattr(torch, self.dtype)


def probe_device(prefer: str | None = None) -> Device:
    """Find the best device, or the one `prefer` (Settings.device, from COSTA_DEVICE) names.

    Raises nothing: without torch the answer is the CPU with a detail saying torch is missing.
    """
    want = (prefer or "").strip().lower()
    if importlib.util.find_spec("torch") is None:
        return Device("cpu", "float32", "torch is not installed", forced=bool(want))
    import torch

    if want:
        if want.startswith("cuda"):
            if not torch.cuda.is_available():
                return Device("cpu", "float32", f"COSTA_DEVICE={want} but torch sees no CUDA GPU", forced=True)
            idx = int(want.split(":")[1]) if ":" in want else 0
            props = torch.cuda.get_device_properties(idx)
            return Device(want, "float16", f"CUDA {props.name}", int(props.total_memory), forced=True)
        if want == "mps":
            if not torch.backends.mps.is_available():
                return Device("cpu", "float32", "COSTA_DEVICE=mps but MPS is not available", forced=True)
            return Device("mps", "float16", "Apple MPS", forced=True)
        return Device("cpu", "float32", f"CPU ({os.cpu_count()} cores), chosen by COSTA_DEVICE", forced=True)
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        return Device("cuda", "float16", f"CUDA {props.name}", int(props.total_memory))
    if torch.backends.mps.is_available():
        return Device("mps", "float16", "Apple MPS")
    return Device("cpu", "float32", f"CPU ({os.cpu_count()} cores), no CUDA or MPS GPU found")


def is_out_of_memory(error: BaseException) -> bool:
    """True for a GPU out-of-memory error (torch's OutOfMemoryError or the RuntimeError older builds raise)."""
    if type(error).__name__ == "OutOfMemoryError":
        return True
    return isinstance(error, RuntimeError) and "out of memory" in str(error).lower()


def free_accelerator_memory() -> None:
    """Return cached blocks to the driver after a model is unloaded (no-op without torch or a GPU)."""
    import sys

    torch = sys.modules.get("torch")
    if torch is None:
        return
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    mps = getattr(torch, "mps", None)
    if mps is not None and torch.backends.mps.is_available():
        mps.empty_cache()
