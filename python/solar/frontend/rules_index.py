"""Lowering rules for counting and strided writes by index (issue 42): `bincount` and a
`slice_scatter` with a step that eager PyTorch does not write in place. Registered in the
table of rules.py with its `@rule` decorator (rules.py imports this module at its end).
Each lowers to the `scatter_add` or `scatter` builtin (docs/ir.md), whose traffic is the
base, the index and the source read once and the result written once."""

from __future__ import annotations

from .builder import Value
from .rules import _const_typed, _in_place, _scatter_into, _slice_scatter, rule
from .values import _axis, tensor


@rule("aten.bincount.default")
def _bincount(lw, x, weights=None, minlength=0):
    """torch.bincount of a 1-D tensor of non-negative integers: the count of each value (or
    the sum of the weights at its positions) in a result of max(x) + 1 or `minlength`
    entries. The length depends on the values, so the capture knows it for the values of
    the inputs (a value-specialised capture, docs/pytorch.md); the result is zeros of that
    length with one added per element of x (`scatter_add`: duplicates add up)."""
    x = tensor(lw, x)
    shape, dtype = lw.out_shape(), lw.out_dtype()
    if len(x.shape) != 1 or len(shape) != 1:
        lw.fail(f"bincount of a {len(x.shape)}-D tensor: torch.bincount takes 1-D input")
    zeros = _const_typed(lw, 0.0, shape, dtype)
    if x.shape[0] == 0:
        return zeros
    src = 1.0 if weights is None else weights
    return _scatter_into(lw, "scatter_add", zeros, 0, x, src)


@rule("aten.slice_scatter.default")
def _strided_slice_scatter(lw, base, src, dim=0, start=None, end=None, step=1):
    """base with base[start:end:step] along dim replaced by src. With a step other than 1
    that is not written in place (rules.py's `_slice_scatter` does the rest): the `scatter`
    builtin with an index start + step * j along dim (an `iota`, broadcast over src's other
    dims as a view), so base and src are read once and the result written once, as a kernel
    copying the untouched elements and writing src between them would."""
    if step == 1 or _in_place(lw):
        return _slice_scatter(lw, base, src, dim, start, end, step)
    base_v, src_v = tensor(lw, base), tensor(lw, src)
    axis = _axis(dim, len(base_v.shape))
    n = base_v.shape[axis]
    first = 0 if start is None else start
    first = max(0, min(n, first + n if first < 0 else first))
    k = src_v.shape[axis]
    if k == 0:
        return lw.cast(base_v, base_v.dtype)
    var = lw.fresh()
    lw.emit(f'{var} = iota("c0", c0={k}, dtype="int64")')
    index = Value(var, (k,), "int64")
    if step != 1:
        index = lw.call("mul_scalar", [index.var, repr(float(step))], (k,), "int64")
    if first != 0:
        index = lw.call("add_scalar", [index.var, repr(float(first))], (k,), "int64")
    ones = (1,) * axis + (k,) + (1,) * (len(src_v.shape) - axis - 1)
    index = lw.broadcast_to(lw.reshape(index, ones), src_v.shape)
    return _scatter_into(lw, "scatter", base_v, axis, index, src_v)
