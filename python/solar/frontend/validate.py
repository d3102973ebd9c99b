"""Validation of a lowered program against the PyTorch program it came from.

Levels (ARCHITECTURE.md): `full` — the IR program runs at the program's own sizes on the same
inputs and weights as PyTorch and every output matches; `scaled` — the same at reduced sizes
(size constants divided by a power of two, the same computing operators in the same order);
`per-kernel` — each distinct operator alone against PyTorch (frontend/per_kernel.py); `none` —
not even that could run here (the detail says why); `failed` — an output differs (the report
says which and by how much); `inconclusive` — every output passed, but for some the allowed
error is not below its magnitude even with bf16 and fp16 computed as fp32 (widened_run), so
the comparison could not have told it from zeros (docs/execution.md, "When a comparison cannot
decide").
"""

from __future__ import annotations

import re
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


# Formats a widened run computes as fp32 (docs/execution.md, "When a comparison cannot
# decide"); a lowered program that names any of _KEPT is not widened (it reads a value's
# bits, which widening changes). fp8 and fp4 casts and codes stay as they are on both sides.
_WIDENED = ("bf16", "fp16")
_KEPT = ("bitcast",)


def widened_text(text: str) -> str:
    """The lowered IR text with every bf16 and fp16 format written fp32; "" when it names a
    format or builtin whose bits matter (_KEPT) or has nothing to widen."""
    if any(k in text for k in _KEPT):
        return ""
    wide = re.sub(r"([\"'])(" + "|".join(_WIDENED) + r")\1", r"\1fp32\1", text)
    return wide if wide != text else ""


def widened_run(capture: Capture, lowered: LoweredProgram, seed: int, backend: str, max_seconds):
    """The lowered program and the PyTorch program with every bf16 and fp16 value computed
    as fp32: (actuals, expecteds, dtypes, budgets) in validate_full's output order, or a
    string saying why they cannot run so. The IR's formats are rewritten (widened_text) and
    its bf16/fp16 inputs widened exactly; PyTorch runs on widened inputs, parameters and
    buffers under a mode that turns every bf16 or fp16 dtype its code names (`.to`,
    `dtype=`, `.half()`, `.bfloat16()`) into fp32. Both sides then compute the same function
    as the original, in fp32, where the comparison decides."""
    import torch
    from torch.func import functional_call

    from ..execution import run
    from ..tolerance import output_budgets
    from .fullrun import RANDOM_KEY, dropout_at_expectation, golden_run, ir_inputs, random_tape

    if capture.training:
        return "a training step is not widened"
    text = widened_text(lowered.text)
    if not text:
        return (
            "the lowered program has no bf16 or fp16 to widen"
            if not any(k in lowered.text for k in _KEPT)
            else "the lowered program reinterprets a value's bits (bitcast)"
        )
    try:
        program = _core.load_program_source(text, lowered.source or "<widened module>")
        model, inputs, _, before = golden_run(capture, seed, lowered.buffer_outputs)
        feeds = ir_inputs(lowered, capture, model, inputs, before)
        feeds = {k: _widen(v) for k, v in feeds.items()}
        outs = run(
            program,
            feeds,
            backend=backend,
            bounds_check=False,
            max_seconds=max_seconds,
            max_bytes=1 << 62,
        )
        del feeds
        state = {k: _widen(v) for k, v in model.named_parameters()}
        state.update({k: _widen(v) for k, v in model.named_buffers()})
        drawn = [_widen(v) for k, v in before.items() if k.startswith(RANDOM_KEY)]
        state.update({k: _widen(v) for k, v in before.items() if not k.startswith(RANDOM_KEY)})
        wide = [_widen(t.clone()) if isinstance(t, torch.Tensor) else t for t in inputs]
        grad = torch.enable_grad() if capture.autograd else torch.no_grad()
        with grad, dropout_at_expectation(), random_tape(replay=drawn), _Widening():
            out = functional_call(model, state, tuple(wide))
    except Exception as e:  # noqa: BLE001 - a program that cannot run widened: nothing decides
        first = str(e).splitlines()[0] if str(e) else ""
        return f"the widened run failed: {type(e).__name__}: {first}"[:300]
    expecteds = [
        t.detach() if isinstance(t, torch.Tensor) else t
        for t in (out if isinstance(out, (tuple, list)) else [out])
    ]
    expecteds += [state[k] for k in lowered.buffer_outputs if k in state]
    graph = _core.trace(program, [])
    dtypes = [graph.tensors[t].dtype for t in graph.outputs]
    actuals = [outs[f"out{i}"] for i in range(min(len(expecteds), len(dtypes)))]
    return actuals, expecteds, dtypes, output_budgets(graph)


def _widen(t):
    """A bf16 or fp16 tensor as fp32 (exactly), anything else detached as it is."""
    import torch

    if isinstance(t, torch.Tensor):
        t = t.detach()
        return t.float() if t.dtype in (torch.bfloat16, torch.float16) else t
    return t


def _wide_dtype(a):
    import torch

    if isinstance(a, torch.dtype) and a in (torch.bfloat16, torch.float16):
        return torch.float32
    return a


class _Widening:
    """A TorchFunctionMode (built on first use: torch is imported lazily) under which every
    bf16 or fp16 dtype an operator is given is fp32, and `.half()`/`.bfloat16()` are
    `.float()`."""

    def __new__(cls):
        from torch.overrides import TorchFunctionMode

        class Widening(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                import torch

                if func in (torch.Tensor.half, torch.Tensor.bfloat16):
                    func = torch.Tensor.float
                args = tuple(_wide_dtype(a) for a in args)
                kwargs = {k: _wide_dtype(v) for k, v in (kwargs or {}).items()}
                return func(*args, **kwargs)

        return Widening()
