"""What validation of any front end shares: its outcome (Validation), its budgets, and
loading a lowered program whose diagnostics point into the lowered text. Nothing here
imports a framework."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field

from .. import _core
from ..errors import UserError
from .builder import LoweredProgram

# Per program: everything validation allocates at once (the real model, PyTorch's inputs and
# their copies, PyTorch's and the IR's arrays, the comparison); see validation_bytes.
VALIDATION_MAX_BYTES = int(os.environ.get("SOLAR_VALIDATION_MAX_BYTES", 1 << 30))
VALIDATION_MAX_SECONDS = 15.0  # per program: estimated IR execution time (conservative)


@dataclass
class Validation:
    status: str  # full | scaled | per-kernel | inconclusive | none | failed
    detail: str
    outputs: list = field(default_factory=list)  # Comparison per output
    backend: str = ""  # the executor backend that ran the IR ("" when nothing ran)


class RealModelError(Exception):
    """Building or running the real PyTorch program for validation failed (it was captured
    on fake tensors, so the analysis stands): validation is `none` with this reason."""


# Bytes per output element that comparing one output allocates (both sides as float64, the
# difference, the relative error and the masks).
COMPARE_BYTES_PER_ELEMENT = 64


def is_compile_error(e: BaseException) -> bool:
    """A UserError of kind `compile`: the native backend cannot compile or load here."""
    return isinstance(e, UserError) and any(d.kind == "compile" for d in e.diagnostics)


def load_lowered(lowered: LoweredProgram):
    """The checked Program of a lowered text, named after its source (reports say what was
    analysed)."""
    with in_lowered_text(lowered.source):
        return _core.load_program_source(lowered.text, lowered.source or "<in-memory module>")


@contextlib.contextmanager
def in_lowered_text(source: str):
    """Diagnostics raised inside point into the lowered text of `source` (loading or tracing
    it), which is no file of the user's: they are renamed to lowered_name(source)."""
    import dataclasses

    try:
        yield
    except UserError as e:
        renamed = [dataclasses.replace(d, file=lowered_name(source)) for d in e.diagnostics]
        raise UserError("\n".join(str(d) for d in renamed), renamed) from None


def lowered_name(source: str) -> str:
    """The name diagnostics give the lowered IR of `source` (a text in memory, not a file:
    `solar analyze --emit-ir FILE` writes it)."""
    return f"<IR lowered from {source or 'a module'}>"


def on_best_backend(attempt, backend: str) -> Validation:
    """Runs attempt(backend) -> Validation on the native backend where it can run; where it
    cannot (no compiler, no writable cache, a kernel that does not compile) again from the
    top on the interpreter (the budget at its speed), and the detail says so. A failure to
    build or run the real program (RealModelError) gives `none` with the reason."""
    from ..execution import native_unavailable

    why_not_native = native_unavailable() if backend == "native" else ""
    if why_not_native:
        backend = "interpreter"
    while True:
        try:
            v = attempt(backend)
            break
        except UserError as e:
            if backend != "native" or not is_compile_error(e):
                raise
            why_not_native = e.diagnostics[0].message.splitlines()[0]
            backend = "interpreter"  # and again from the top: the budget at its speed
        except RealModelError as e:
            return Validation("none", f"not validated: {e}")
    if v.backend == "":
        v.backend = backend
    if why_not_native and v.status != "none":
        v.detail += (
            f"; run with the interpreter backend: the native backend is unavailable here "
            f"({why_not_native})"
        )
    return v


def compared(results: list, framework: str, sizes: str, backend: str) -> Validation:
    """The outcome of comparing every output (solar.tolerance Comparisons): `failed` with the
    first mismatching output's summary; else `inconclusive` when some floating output passed
    a comparison that cannot decide (an all-zero output would have passed too, even in the
    widened run: docs/execution.md, "When a comparison cannot decide"), naming it and why;
    else `full`, with what the comparison noted (ill-conditioned outputs, outputs decided by
    the widened run)."""
    bad = next((c for c in results if not c.ok), None)
    if bad is not None:
        return Validation("failed", bad.summary(sizes), results)
    undecided = [c for c in results if not c.informative]
    if undecided:
        detail = (
            f"{len(results)} output(s) match {framework} {sizes} ({backend} backend), but "
            f"{len(undecided)} by a comparison that cannot decide"
        )
        for c in undecided:
            detail += f"; {c.name}: " + "; ".join(c.notes)
        return Validation("inconclusive", detail, results)
    detail = f"{len(results)} output(s) match {framework} {sizes} ({backend} backend)"
    for c in results:
        if c.response is not None:
            detail += (
                f"; {c.name} is ill-conditioned (one-ulp changes of the inputs move it "
                f"by up to {c.response:.3g}): allowed error {c.atol:.3g}"
            )
        if c.decided_wide:
            detail += (
                f"; {c.name} decided by the widened run, bf16 and fp16 computed as fp32 on "
                "both sides (at its own formats an all-zero output would have passed too)"
            )
    return Validation("full", detail, results)
