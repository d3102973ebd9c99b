"""The PyTorch front end: capture a PyTorch program with torch.export (on the meta device:
nothing is allocated at full size), lower every ATen operator deterministically to IR
kernels from the standard library in `stdlib/` plus builtins, and validate the emitted
program by running it against the PyTorch program (docs/pytorch.md)."""

from .capture import Capture, capture_module, capture_problem, load_problem
from .lower import LoweredProgram, lower

__all__ = [
    "Capture",
    "LoweredProgram",
    "capture_module",
    "capture_problem",
    "load_problem",
    "lower",
]
