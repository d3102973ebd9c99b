"""Op helpers shared by the PyTorch rules (frontend/rules.py) and the JAX rules
(frontend/jax/rules.py): each takes the lowering builder (`lw`, frontend/builder.py) and
Values, and emits IR the way both front ends lower the operation (a flip, a strided slice,
a top-k, a reduction along dims, a convolution, ...). Neither language's rules module is
imported here; both import these."""

from __future__ import annotations

import math

from .builder import Value
from .values import Transposed, _axis, _concat, tensor

# A concatenation along an axis, as both front ends lower it.
concat = _concat


def split(lw, x, sizes, axis):
    x = tensor(lw, x)
    var = lw.fresh()
    lw.emit(f"{var} = split({x.var}, dim={axis}, sizes={list(sizes)})")
    metas = lw.out_meta()
    return tuple(
        Value(f"{var}[{i}]", tuple(int(s) for s in m.shape), x.dtype) for i, m in enumerate(metas)
    )


# ---------------------------------------------------------------------------- convolution
def per_dim(v, nd: int) -> list[int]:
    """A convolution attribute per spatial dim: PyTorch lets one value stand for all
    (`padding="valid"` arrives as [0])."""
    v = [int(e) for e in (v if isinstance(v, (list, tuple)) else [v])]
    return v * nd if len(v) == 1 and nd > 1 else v


def convolution(lw, x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
    x, w = tensor(lw, x), tensor(lw, w)
    nd = len(x.shape) - 2
    stride, padding, dilation = (per_dim(v, nd) for v in (stride, padding, dilation))
    output_padding = per_dim(output_padding, nd)
    out = lw.out_shape()
    g = int(groups)
    if nd == 1:  # as 2-D with H = R = 1
        stride, padding, dilation = [1, *stride], [0, *padding], [1, *dilation]
        output_padding = [0, *output_padding]
        x = lw.reshape(x, (x.shape[0], x.shape[1], 1, x.shape[2]))
        w = lw.reshape(w, (w.shape[0], w.shape[1], 1, w.shape[2]))
        out2 = (out[0], out[1], 1, out[2])
    elif nd == 2:
        out2 = out
    elif nd == 3:
        n, c = x.shape[:2]
        xg = lw.reshape(x, (n, g, c // g, *x.shape[2:]))
        wg = lw.reshape(w, (g, w.shape[0] // g, *w.shape[1:]))
        if transposed:
            # PyTorch weight [C_in, O/G, T, R, S] -> [G, C_in/G, O/G, T, R, S]
            y = lw.call(
                "conv_transpose3d",
                [xg.var, wg.var, *stride, *padding, *dilation, *output_padding],
                (n, g, w.shape[1], *out[2:]),
                lw.out_dtype(),
            )
        else:
            y = lw.call(
                "conv3d",
                [xg.var, wg.var, *stride, *padding, *dilation],
                (n, g, out[1] // g, *out[2:]),
                lw.out_dtype(),
            )
        return add_bias(lw, lw.reshape(y, out), bias)
    else:
        lw.fail(
            f"{nd}-D convolution (transposed={transposed}, dilation={list(dilation)}) "
            "is not supported yet"
        )
    n, c, h, wd = x.shape
    xg = lw.reshape(x, (n, g, c // g, h, wd))
    if transposed:
        # PyTorch weight [C_in, O/G, R, S] -> [G, C_in/G, O/G, R, S]
        wg = lw.reshape(w, (g, w.shape[0] // g, *w.shape[1:]))
        o_g = w.shape[1]
        y = lw.call(
            "conv_transpose2d",
            [xg.var, wg.var, *stride, *padding, *dilation, *output_padding],
            (n, g, o_g, out2[2], out2[3]),
            lw.out_dtype(),
        )
    else:
        wg = lw.reshape(w, (g, w.shape[0] // g, *w.shape[1:]))
        y = lw.call(
            "conv2d",
            [xg.var, wg.var, *stride, *padding, *dilation],
            (n, g, out2[1] // g, out2[2], out2[3]),
            lw.out_dtype(),
        )
    return add_bias(lw, lw.reshape(y, out), bias)


def add_bias(lw, y: Value, bias):
    if bias is None:
        return y
    bias = tensor(lw, bias)
    n, c = y.shape[:2]
    s = y.numel // (n * c)
    r = lw.call("add_channel_bias", [lw.reshape(y, (n, c, s)).var, bias.var], (n, c, s), y.dtype)
    return lw.reshape(r, y.shape)


def around(lw, x: Value, dims):
    """Reshape x to [A, R, B] with R the product of `dims` (which must be contiguous;
    otherwise they are permuted to the end first)."""
    if not x.shape:  # a 0-d tensor: one element
        x = lw.reshape(x, (1,))
        dims = []
    rank = len(x.shape)
    dims = sorted({_axis(d, rank) for d in dims}) if dims else list(range(rank))
    if dims != list(range(dims[0], dims[-1] + 1)):
        keep = [d for d in range(rank) if d not in dims]
        x = lw.permute(x, keep + dims)
        dims = list(range(len(keep), rank))
    a = b = r = 1
    for d in range(rank):
        if d < dims[0]:
            a *= x.shape[d]
        elif d > dims[-1]:
            b *= x.shape[d]
        else:
            r *= x.shape[d]
    return lw.reshape(x, (a, r, b)), (a, r, b)


def reduce(kernel: str, int_out: bool = False):
    def lower_reduce(lw, x, dims=None, keepdim=False, **kwargs):
        x = tensor(lw, x)
        if isinstance(dims, int):
            dims = [dims]
        mid, (a, _, b) = around(lw, x, dims or [])
        dtype = lw.out_dtype()
        y = lw.call(kernel, [mid.var], (a, b), dtype, kernel_dtype="fp32" if int_out else dtype)
        return lw.reshape(y, lw.out_shape())

    return lower_reduce


def along(kernel: str):
    def lower_along(lw, x, dim, *args, **kwargs):
        x = tensor(lw, x)
        band = lw.bands.get(lw.node.name) if lw.bands else None
        if band is not None:  # a masked attention's softmax (masks.py): only inside the band
            rows, cols = x.shape[-2:]
            x3 = lw.reshape(x, (x.numel // (rows * cols), rows, cols))
            y = lw.call("softmax_band", [x3.var, *band.args()], x3.shape, lw.out_dtype())
            return lw.reshape(y, lw.out_shape())
        mid, shape3 = around(lw, x, [dim])
        y = lw.call(kernel, [mid.var], shape3, lw.out_dtype())
        return lw.reshape(y, lw.out_shape())

    return lower_along


def fold_spatial(lw, x: Value, nd: int) -> Value:
    """x [..., *spatial] viewed as [A, *spatial] (batch and channels folded into A)."""
    spatial = x.shape[len(x.shape) - nd :]
    n = 1
    for s in spatial:
        n *= s
    return lw.reshape(x, (x.numel // n if n else 0, *spatial))


def gather_rows(lw, table: Value, index: Value, axis: int, distinct: int = 0) -> Value:
    """The `gather` builtin: index's dims, then table's dims without `axis`; `distinct`: the
    fewest distinct rows the index holds, when known (top-k indices)."""
    var = lw.fresh()
    least = f", distinct={distinct}" if distinct else ""
    lw.emit(f"{var} = gather({table.var}, {index.var}, dim={axis}{least})")
    shape = tuple(index.shape) + tuple(s for i, s in enumerate(table.shape) if i != axis)
    return Value(var, shape, table.dtype)


def topk(lw, x, k, dim=-1, largest=True, sorted=True):
    """The `topk` builtin: values and int64 indices, best first (a sorted result is also a
    valid unsorted one: PyTorch leaves the order of `sorted=False` unspecified). Data
    movement: 0 FLOPs, a lower bound on the comparisons any selection makes."""
    x = tensor(lw, x)
    axis = _axis(dim, len(x.shape))
    var = lw.fresh()
    lw.emit(f"{var} = topk({x.var}, k={int(k)}, dim={axis}, largest={int(bool(largest))})")
    shape = list(x.shape)
    shape[axis] = int(k)
    return (
        Value(f"{var}[0]", tuple(shape), x.dtype),
        Value(f"{var}[1]", tuple(shape), "int64", int(k)),  # k distinct positions per row
    )


def scatter_into(lw, builtin, x, dim, index, src, inplace=False):
    """`builtin`(x, index, src) along dim: scatter or scatter_add (`inplace`: into x's
    memory, where eager PyTorch writes in place: docs/pytorch.md, In-place updates)."""
    x, index = tensor(lw, x), tensor(lw, index)
    axis = _axis(dim, len(x.shape))
    if len(index.shape) != len(x.shape) or any(
        i != s for d, (i, s) in enumerate(zip(index.shape, x.shape, strict=True)) if d != axis
    ):
        lw.fail(
            f"{builtin} with an index of shape {list(index.shape)} into {list(x.shape)} along "
            f"dim {axis}: only an index of the input's shape except along dim is supported"
        )
    if isinstance(src, Value | Transposed):
        src = tensor(lw, src)
        for d, n in enumerate(index.shape):
            if src.shape[d] != n:
                var = lw.fresh()
                lw.emit(f"{var} = slice({src.var}, dim={d}, start=0, stop={n})")
                src = Value(var, src.shape[:d] + (n,) + src.shape[d + 1 :], src.dtype)
        if src.dtype != x.dtype:
            src = lw.cast(src, x.dtype)
    else:
        src = const_typed(lw, src, index.shape, x.dtype)
    var = lw.fresh()
    flag = ", inplace=1" if inplace else ""
    lw.emit(f"{var} = {builtin}({x.var}, {index.var}, {src.var}, dim={axis}{flag})")
    return Value(var, x.shape, x.dtype)


def slice_view(lw, x: Value, axis: int, start: int, stop: int) -> Value | None:
    """x[start:stop] along axis (a view); None when empty."""
    if stop <= start:
        return None
    if start == 0 and stop == x.shape[axis]:
        return x
    var = lw.fresh()
    lw.emit(f"{var} = slice({x.var}, dim={axis}, start={start}, stop={stop}, step=1)")
    shape = list(x.shape)
    shape[axis] = stop - start
    return Value(var, tuple(shape), x.dtype)


def dims_arg(dims, rank: int):
    """A reduction's dim argument as a list of axes ([] = all)."""
    if dims is None:
        return []
    if isinstance(dims, int):
        return [_axis(dims, rank)]
    return [_axis(d, rank) for d in dims]


def reduce_any(lw, x, dims=None, keepdim=False):
    x = tensor(lw, x)
    mid, (a, _, b) = around(lw, x, dims_arg(dims, len(x.shape)))
    y = lw.call("any_mid", [mid.var], (a, b), "bool", kernel_dtype="fp32")
    return lw.reshape(y, lw.out_shape())


def flip(lw, x, dims):
    """Each run of adjacent flipped dims is one reversed block (a copy per run)."""
    x = tensor(lw, x)
    rank = len(x.shape)
    axes = sorted({_axis(d, rank) for d in dims})
    runs = []
    for d in axes:
        if runs and runs[-1][-1] == d - 1:
            runs[-1].append(d)
        else:
            runs.append([d])
    shape = x.shape
    for run in runs:
        mid, shape3 = around(lw, x, run)
        x = lw.reshape(lw.call("flip_mid", [mid.var], shape3, x.dtype), shape)
    return x


def const_typed(lw, value, shape, dtype):
    """A constant tensor (the `constant` builtin; NaN, which has no literal, from a kernel)."""
    if math.isnan(float(value)):
        n = math.prod(shape)
        return lw.reshape(lw.call("nan_const", [n], (n,), dtype), shape)
    names = [f"c{i}" for i in range(len(shape))]
    var = lw.fresh()
    sizes = "".join(f", {n}={s}" for n, s in zip(names, shape, strict=True))
    lw.emit(f'{var} = constant({float(value)!r}, "{",".join(names)}"{sizes}, dtype="{dtype}")')
    return Value(var, tuple(shape), dtype)
