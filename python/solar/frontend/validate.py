"""Validation of a lowered program against the PyTorch program it came from.

Levels (ARCHITECTURE.md): `full` — the IR program runs at the program's own sizes on the same
inputs and weights as PyTorch and every output matches; `scaled` — the same at reduced sizes
(size constants divided by a power of two, the same computing operators in the same order);
`per-kernel` — each distinct operator alone against PyTorch (frontend/per_kernel.py); `none` —
not even that could run here (the detail says why); `failed` — an output differs (the report
says which and by how much); `inconclusive` — every output passed, but for some the allowed
error is not below its magnitude even with bf16 and fp16 computed as fp32 (widened_run in
fullrun.py), so the comparison could not have told it from zeros (docs/execution.md, "When a
comparison cannot decide").
"""

from __future__ import annotations

from pathlib import Path

from .. import _core
from ..errors import UserError, argument_error
from .capture import Capture
from .fullrun import (
    check_validation_budget,
    structure,
    validate_full,
)
from .lower import LoweredProgram, lower
from .per_kernel import validate_per_kernel
from .sizes import scaled_run
from .validation import (
    VALIDATION_MAX_BYTES,
    VALIDATION_MAX_SECONDS,
    Validation,
    is_compile_error,
    load_lowered,
    on_best_backend,
)


def validate(
    capture: Capture,
    lowered: LoweredProgram,
    program,
    graph,
    seed: int = 0,
    backend: str = "native",
    max_bytes=None,
    max_seconds=None,
) -> Validation:
    """Validates a lowered program: at full size when it fits the validation budget, else at
    reduced sizes (scaled), else per kernel. The native backend is used where it can run;
    where it cannot (no compiler, no writable cache, a kernel that does not compile) the
    interpreter runs instead, with the budget at the interpreter's speed, and the detail says
    so. A failure to build or run the real program gives `none` with the reason."""
    # Validation runs PyTorch and the IR program, a batch runs many: a tighter budget than
    # `solar run`'s, so that large programs validate at reduced sizes in seconds.
    max_bytes = VALIDATION_MAX_BYTES if max_bytes is None else max_bytes
    max_seconds = VALIDATION_MAX_SECONDS if max_seconds is None else max_seconds
    return on_best_backend(
        lambda b: _validate(capture, lowered, program, graph, seed, b, max_bytes, max_seconds),
        backend,
    )


def _validate(capture, lowered, program, graph, seed, backend, max_bytes, max_seconds):
    try:
        if capture.problem is None and capture.module is None:
            raise argument_error("a module on the meta device has no values to run")
        check_validation_budget(graph, capture, backend, max_bytes, max_seconds)
    except UserError as e:
        if is_compile_error(e):
            raise
        if capture.problem is None:
            return validate_per_kernel(
                capture, lowered, e.diagnostics[0].message, seed, backend, max_bytes, max_seconds
            )
        return validate_scaled(
            capture, lowered, graph, e.diagnostics[0].message, seed, backend, max_bytes, max_seconds
        )
    return validate_full(
        capture,
        lowered,
        program,
        seed,
        backend,
        max_bytes,
        max_seconds,
        "at the program's own sizes",
    )


def validate_scaled(
    capture: Capture,
    lowered: LoweredProgram,
    graph,
    why: str,
    seed: int,
    backend: str,
    max_bytes,
    max_seconds,
) -> Validation:
    """Rebuilds the problem with its size constants divided by a power of two (derived
    constants and constructor arguments follow, since the module is re-executed), checks the
    lowered program computes with the same operators in the same order as at full size, and
    validates that program fully."""
    from .capture import capture_problem

    last = ""

    def step(overrides, sizes):
        nonlocal last
        try:
            cap = capture_problem(capture.source, overrides, capture.mode, capture.training)
            cap.fallback = capture.fallback
            low = lower(cap)
        except UserError as e:
            last = e.diagnostics[0].message
            return "smaller"
        if structure(low) != structure(lowered):
            last = "the program's operators change at these sizes"
            return "next"
        program = load_lowered(low)
        small = _core.trace(program, [])
        try:
            check_validation_budget(small, cap, backend, max_bytes, max_seconds)
        except UserError as e:
            last = e.diagnostics[0].message
            return "larger"
        scaled = ", ".join(f"{k} {sizes[k]}->{overrides[k]}" for k in overrides)
        v = validate_full(
            cap,
            low,
            program,
            seed,
            backend,
            max_bytes,
            max_seconds,
            f"at reduced sizes ({scaled}; the same {len(structure(low))} "
            "computing operators as at full size)",
        )
        status = {"full": "scaled", "inconclusive": "inconclusive"}.get(v.status, "failed")
        return Validation(status, v.detail, v.outputs)

    text = Path(capture.source).read_text()
    found, sizes = scaled_run(text, graph, backend, max_seconds, step)
    if found is not None:
        return found
    if not sizes:
        return validate_per_kernel(
            capture,
            lowered,
            f"{why}; no module-level size constants to scale",
            seed,
            backend,
            max_bytes,
            max_seconds,
        )
    return validate_per_kernel(
        capture,
        lowered,
        f"{why}; no reduced size kept the program's structure within the budget ({last})",
        seed,
        backend,
        max_bytes,
        max_seconds,
    )
