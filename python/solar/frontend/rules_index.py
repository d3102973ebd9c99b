"""Lowering by index for what rules.py's rules leave (issue 42): the `slice_scatter` with a
step that eager PyTorch does not write in place, as the `scatter` builtin (docs/ir.md), whose
traffic is the base, the index and the source read once and the result written once.
(`bincount`, whose length its values decide, is rewritten by the value-specialised capture
into `scatter_add` of ones into zeros: frontend/specialise.py.)

rules.py's slice_scatter rule calls `strided_slice_scatter`; this module imports nothing of
rules.py, so the two make no import cycle."""

from __future__ import annotations

from .builder import Value


def _scatter(lw, builtin: str, x: Value, axis: int, index: Value, src: Value) -> Value:
    var = lw.fresh()
    lw.emit(f"{var} = {builtin}({x.var}, {index.var}, {src.var}, dim={axis})")
    return Value(var, x.shape, x.dtype)


def strided_slice_scatter(lw, base: Value, src: Value, axis: int, start: int, step: int):
    """base with src written at start, start + step, ... along axis, not in place (rules.py's
    slice_scatter rule decides that): the `scatter` builtin with an index start + step * j
    (an `iota`, broadcast over src's other dims as a view), so base and src are read once and
    the result written once, as a kernel copying the untouched elements and writing src
    between them would (SOL-ExecBench task 23 writes every other position of a grid)."""
    k = src.shape[axis]
    if k == 0:
        return base
    var = lw.fresh()
    lw.emit(f'{var} = iota("c0", c0={k}, dtype="int64")')
    index = Value(var, (k,), "int64")
    if step != 1:
        index = lw.call("mul_scalar", [index.var, repr(float(step))], (k,), "int64")
    if start != 0:
        index = lw.call("add_scalar", [index.var, repr(float(start))], (k,), "int64")
    ones = (1,) * axis + (k,) + (1,) * (len(src.shape) - axis - 1)
    index = lw.broadcast_to(lw.reshape(index, ones), src.shape)
    return _scatter(lw, "scatter", base, axis, index, lw.cast(src, base.dtype))
