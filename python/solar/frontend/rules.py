"""Lowering rules: one function per core-ATen operator (keyed by str(OpOverload)).

A rule receives the Lowerer and the operator's arguments (tensors as `Value`s, lists,
Python scalars) and returns a Value (or a tuple for multi-output operators). docs/pytorch.md
lists the operators covered; anything else is a clear error naming the operator and the
source line.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass

from .lower import Lowerer, Value

RULES: dict = {}


def rule(*names):
    def register(fn):
        for n in names:
            RULES[n] = fn
        return fn

    return register


@dataclass
class Transposed(Value):
    """A permute of the last two dims that mm/bmm read directly (the `_nt` kernels); any
    other consumer materialises it as a copy."""

    base: Value = None
    order: tuple = ()


def tensor(lw: Lowerer, v) -> Value:
    """A concrete Value (materialising a folded transpose)."""
    if isinstance(v, Transposed):
        return lw.permute(v.base, v.order)
    if isinstance(v, _Unused):
        lw.fail(f"the {v.what} result of {v.op} is used, but the lowering does not produce it")
    if not isinstance(v, Value):
        lw.fail(f"expected a tensor argument, got {type(v).__name__}")
    return v


def is_tensor(v) -> bool:
    return isinstance(v, Value)


def _axis(axis: int, rank: int) -> int:
    return axis % rank if rank else 0


# ---------------------------------------------------------------------------- elementwise
def elementwise(lw: Lowerer, kernel: str, tensors, scalars=(), bool_out=False) -> Value:
    shape = lw.out_shape()
    dtype = lw.out_dtype()
    flat = [lw.flat(lw.broadcast_to(tensor(lw, t), shape)) for t in tensors]
    n = 1
    for s in shape:
        n *= s
    args = [f.var for f in flat] + [repr(float(s)) for s in scalars]
    r = lw.call(kernel, args, (n,), dtype, kernel_dtype="fp32" if bool_out else dtype)
    return lw.reshape(r, shape)


UNARY = {
    "aten.relu.default": "relu",
    "aten.sigmoid.default": "sigmoid_",
    "aten.tanh.default": "tanh_",
    "aten.exp.default": "exp_",
    "aten.log.default": "log_",
    "aten.sqrt.default": "sqrt_",
    "aten.rsqrt.default": "rsqrt_",
    "aten.neg.default": "neg",
    "aten.abs.default": "abs_",
    "aten.reciprocal.default": "reciprocal",
    "aten.erf.default": "erf_",
    "aten.sin.default": "sin_",
    "aten.cos.default": "cos_",
    "aten.log1p.default": "log1p_",
    "aten.expm1.default": "expm1_",
    "aten.floor.default": "floor_",
    "aten.sign.default": "sign",
    "aten.logical_not.default": "logical_not",
}
for _op, _kernel in UNARY.items():
    RULES[_op] = (
        lambda k: lambda lw, x: elementwise(lw, k, [x], bool_out=k.startswith("logical"))
    )(_kernel)


@rule("aten.gelu.default")
def _gelu(lw, x, approximate="none"):
    return elementwise(lw, "gelu_tanh" if approximate == "tanh" else "gelu", [x])


@rule("aten.leaky_relu.default")
def _leaky_relu(lw, x, slope=0.01):
    return elementwise(lw, "leaky_relu", [x], [slope])


@rule("aten.elu.default")
def _elu(lw, x, alpha=1.0, scale=1.0, input_scale=1.0):
    return elementwise(lw, "elu", [x], [alpha, scale, input_scale])


@rule("aten.hardtanh.default", "aten.clamp.default")
def _clamp(lw, x, lo=None, hi=None):
    lo = -math.inf if lo is None else lo
    hi = math.inf if hi is None else hi
    return elementwise(lw, "clamp", [x], [lo, hi])


@rule("aten.softplus.default")
def _softplus(lw, x, beta=1.0, threshold=20.0):
    return elementwise(lw, "softplus", [x], [beta, threshold])


@rule("aten.pow.Tensor_Scalar")
def _pow_scalar(lw, x, e):
    return elementwise(lw, "pow_scalar", [x], [e])


@rule("aten.pow.Tensor_Tensor")
def _pow_tensor(lw, x, e):
    return elementwise(lw, "pow_tensor", [x, e])


def _binary(kernel, scalar_kernel=None, scalar_fn=None):
    def lower_binary(lw, a, b, alpha=1):
        if is_tensor(a) and is_tensor(b):
            if alpha != 1:
                return elementwise(
                    lw, "add_alpha", [a, b], [alpha * (1 if kernel == "add" else -1)]
                )
            return elementwise(lw, kernel, [a, b])
        if is_tensor(a):
            return elementwise(lw, scalar_kernel, [a], [scalar_fn(b * alpha)])
        lw.fail("a scalar first operand is not supported here")

    return lower_binary


RULES["aten.add.Tensor"] = _binary("add", "add_scalar", lambda s: s)
RULES["aten.add.Scalar"] = RULES["aten.add.Tensor"]
RULES["aten.sub.Tensor"] = _binary("sub", "add_scalar", lambda s: -s)
RULES["aten.sub.Scalar"] = RULES["aten.sub.Tensor"]
RULES["aten.mul.Tensor"] = _binary("mul", "mul_scalar", lambda s: s)
RULES["aten.mul.Scalar"] = RULES["aten.mul.Tensor"]
RULES["aten.div.Tensor"] = _binary("div", "div_scalar", lambda s: s)
RULES["aten.div.Scalar"] = RULES["aten.div.Tensor"]
RULES["aten.maximum.default"] = _binary("maximum")
RULES["aten.minimum.default"] = _binary("minimum")


@rule("aten.rsub.Scalar")
def _rsub(lw, x, s, alpha=1):
    return elementwise(
        lw, "rsub_scalar", [elementwise(lw, "mul_scalar", [x], [alpha]) if alpha != 1 else x], [s]
    )


@rule("aten.where.self")
def _where(lw, c, a, b):
    return elementwise(lw, "where", [c, a, b])


for _name in ("gt", "lt", "ge", "le", "eq", "ne"):
    RULES[f"aten.{_name}.Tensor"] = (
        lambda k: lambda lw, a, b: elementwise(lw, k, [a, b], bool_out=True)
    )(_name)
    RULES[f"aten.{_name}.Scalar"] = (
        lambda k: lambda lw, a, s: elementwise(lw, k + "_scalar", [a], [s], bool_out=True)
    )(_name)
for _name in ("logical_and", "logical_or"):
    RULES[f"aten.{_name}.default"] = (
        lambda k: lambda lw, a, b: elementwise(lw, k, [a, b], bool_out=True)
    )(_name)


# ---------------------------------------------------------------------------- views
@rule(
    "aten.view.default",
    "aten._unsafe_view.default",
    "aten.reshape.default",
    "aten.squeeze.dims",
    "aten.squeeze.dim",
    "aten.squeeze.default",
    "aten.unsqueeze.default",
    "aten.flatten.using_ints",
)
def _view(lw, x, *args):
    return lw.reshape(tensor(lw, x), lw.out_shape())


@rule(
    "aten.clone.default",
    "aten.alias.default",
    "aten.lift_fresh_copy.default",
    "aten.detach.default",
    "aten.contiguous.default",
)
def _identity(lw, x, *args, **kwargs):
    return x


@rule("aten._to_copy.default")
def _to_copy(lw, x, dtype=None, **kwargs):
    return lw.cast(tensor(lw, x), lw.out_dtype())


@rule("aten.permute.default")
def _permute(lw, x, order):
    x = tensor(lw, x)
    order = tuple(int(o) % len(x.shape) for o in order)
    rank = len(x.shape)
    swap_last = rank >= 2 and order == tuple(range(rank - 2)) + (rank - 1, rank - 2)
    users = list(lw.node.users)
    mm_ops = {"aten.mm.default", "aten.bmm.default", "aten.addmm.default"}
    if (
        swap_last
        and users
        and all(str(u.target) in mm_ops and u.args[-1] is lw.node for u in users)
    ):
        return Transposed(x.var, tuple(x.shape[o] for o in order), x.dtype, base=x, order=order)
    return lw.permute(x, order)


@rule("aten.t.default")
def _t(lw, x):
    x = tensor(lw, x)
    return _permute(lw, x, list(range(len(x.shape)))[::-1] if len(x.shape) == 2 else [0])


@rule("aten.transpose.int")
def _transpose(lw, x, a, b):
    x = tensor(lw, x)
    order = list(range(len(x.shape)))
    a, b = a % len(order), b % len(order)
    order[a], order[b] = order[b], order[a]
    return _permute(lw, x, order)


@rule("aten.expand.default")
def _expand(lw, x, sizes, implicit=False):
    return lw.broadcast_to(tensor(lw, x), lw.out_shape())


@rule("aten.slice.Tensor")
def _slice(lw, x, dim=0, start=None, end=None, step=1):
    x = tensor(lw, x)
    axis = _axis(dim, len(x.shape))
    n = x.shape[axis]
    start = 0 if start is None else start
    end = n if end is None else end
    start = max(0, min(n, start + n if start < 0 else start))
    end = max(0, min(n, end + n if end < 0 else end))
    if start == 0 and end == n and step == 1:
        return x
    var = lw.fresh()
    lw.emit(f"{var} = slice({x.var}, dim={axis}, start={start}, stop={end}, step={step})")
    return Value(var, lw.out_shape(), x.dtype)


@rule("aten.select.int")
def _select(lw, x, dim, index):
    x = tensor(lw, x)
    axis = _axis(dim, len(x.shape))
    index = index + x.shape[axis] if index < 0 else index
    var = lw.fresh()
    lw.emit(f"{var} = select({x.var}, dim={axis}, index={index})")
    return Value(var, lw.out_shape(), x.dtype)


@rule("aten.cat.default")
def _cat(lw, tensors, dim=0):
    parts = [tensor(lw, t) for t in tensors if tensor(lw, t).numel > 0 or len(tensors) == 1]
    axis = _axis(dim, len(lw.out_shape()))
    if len(parts) == 1:
        return parts[0]
    var = lw.fresh()
    lw.emit(f"{var} = concat([{', '.join(p.var for p in parts)}], dim={axis})")
    return Value(var, lw.out_shape(), lw.out_dtype())


def _split(lw, x, sizes, axis):
    x = tensor(lw, x)
    var = lw.fresh()
    lw.emit(f"{var} = split({x.var}, dim={axis}, sizes={list(sizes)})")
    metas = lw.out_meta()
    return tuple(
        Value(f"{var}[{i}]", tuple(int(s) for s in m.shape), x.dtype) for i, m in enumerate(metas)
    )


@rule("aten.split_with_sizes.default")
def _split_sizes(lw, x, sizes, dim=0):
    return _split(lw, x, sizes, _axis(dim, len(tensor(lw, x).shape)))


@rule("aten.split.Tensor")
def _split_tensor(lw, x, size, dim=0):
    x = tensor(lw, x)
    axis = _axis(dim, len(x.shape))
    n = x.shape[axis]
    return _split(lw, x, [min(size, n - s) for s in range(0, n, size)], axis)


@rule("aten.constant_pad_nd.default")
def _pad(lw, x, pad, value=0.0):
    x = tensor(lw, x)
    rank = len(x.shape)
    for i in range(0, len(pad), 2):
        axis = rank - 1 - i // 2
        before, after = pad[i], pad[i + 1]
        if before < 0 or after < 0:
            lw.fail("negative padding (cropping) is not supported")
        if before or after:
            var = lw.fresh()
            lw.emit(
                f"{var} = pad({x.var}, dim={axis}, before={before}, after={after}, "
                f"value={float(value)!r})"
            )
            shape = list(x.shape)
            shape[axis] += before + after
            x = Value(var, tuple(shape), x.dtype)
    return x


RULES[str(operator.getitem)] = lambda lw, seq, i: seq[i]
RULES["<built-in function getitem>"] = RULES[str(operator.getitem)]


# ---------------------------------------------------------------------------- creation
@rule(
    "aten.full.default",
    "aten.full_like.default",
    "aten.scalar_tensor.default",
    "aten.zeros_like.default",
    "aten.ones_like.default",
    "aten.zeros.default",
    "aten.ones.default",
)
def _full(lw, *args, **kwargs):
    op = str(lw.node.target)
    if op.startswith("aten.zeros"):
        value = 0.0
    elif op.startswith("aten.ones"):
        value = 1.0
    elif op == "aten.scalar_tensor.default":
        value = args[0]
    else:
        value = args[1]
    shape = lw.out_shape()
    names = [f"c{i}" for i in range(len(shape))]
    sizes = "".join(f", {n}={s}" for n, s in zip(names, shape, strict=True))
    var = lw.fresh()
    lw.emit(
        f'{var} = constant({float(value)!r}, "{",".join(names)}"{sizes}, dtype="{lw.out_dtype()}")'
    )
    return Value(var, shape, lw.out_dtype())


@rule("aten.arange.start_step", "aten.arange.default", "aten.arange.start")
def _arange(lw, *args, **kwargs):
    shape = lw.out_shape()
    nums = [a for a in args if isinstance(a, (int, float))]
    start, step = (0, 1)
    if str(lw.node.target) != "aten.arange.default" and nums:
        start = nums[0]
        step = nums[2] if len(nums) > 2 else 1
    var = lw.fresh()
    lw.emit(f'{var} = iota("c0", c0={shape[0]}, dtype="{lw.out_dtype()}")')
    v = Value(var, shape, lw.out_dtype())
    if step != 1:
        v = elementwise(lw, "mul_scalar", [v], [step])
    if start != 0:
        v = elementwise(lw, "add_scalar", [v], [start])
    return v


# ---------------------------------------------------------------------------- linear algebra
def _mm_like(lw, a, b, batched: bool):
    a = tensor(lw, a)
    if isinstance(b, Transposed):
        kernel = "bmm_nt" if batched else "mm_nt"
        return lw.call(kernel, [a.var, b.base.var], lw.out_shape(), lw.out_dtype())
    return lw.call(
        "bmm" if batched else "mm", [a.var, tensor(lw, b).var], lw.out_shape(), lw.out_dtype()
    )


@rule("aten.mm.default")
def _mm(lw, a, b):
    return _mm_like(lw, a, b, False)


@rule("aten.bmm.default")
def _bmm(lw, a, b):
    return _mm_like(lw, a, b, True)


@rule("aten.addmm.default")
def _addmm(lw, bias, a, b, beta=1, alpha=1):
    bias = tensor(lw, bias)
    a = tensor(lw, a)
    n = lw.out_shape()[1]
    if bias.numel == n and beta == 1 and alpha == 1:
        bias = lw.reshape(bias, (n,))
        if isinstance(b, Transposed):
            return lw.call(
                "linear_nt", [a.var, b.base.var, bias.var], lw.out_shape(), lw.out_dtype()
            )
        return lw.call(
            "linear", [a.var, tensor(lw, b).var, bias.var], lw.out_shape(), lw.out_dtype()
        )
    if bias.numel == n:
        bias = lw.reshape(bias, (n,))
        if isinstance(b, Transposed):
            return lw.call(
                "addmm_nt",
                [bias.var, a.var, b.base.var, float(beta), float(alpha)],
                lw.out_shape(),
                lw.out_dtype(),
            )
        return lw.call(
            "addmm",
            [bias.var, a.var, tensor(lw, b).var, float(beta), float(alpha)],
            lw.out_shape(),
            lw.out_dtype(),
        )
    prod = _mm_like(lw, a, b, False)
    if alpha != 1:
        prod = elementwise(lw, "mul_scalar", [prod], [alpha])
    if beta != 1:
        bias = elementwise(lw, "mul_scalar", [bias], [beta])
    return elementwise(lw, "add", [prod, bias])


# ---------------------------------------------------------------------------- convolution
@rule("aten.convolution.default")
def _convolution(lw, x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
    x, w = tensor(lw, x), tensor(lw, w)
    nd = len(x.shape) - 2
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
    elif nd == 3 and not transposed and all(d == 1 for d in dilation):
        n, c = x.shape[:2]
        xg = lw.reshape(x, (n, g, c // g, *x.shape[2:]))
        wg = lw.reshape(w, (g, w.shape[0] // g, *w.shape[1:]))
        o = out[1]
        y = lw.call(
            "conv3d", [xg.var, wg.var, *stride, *padding], (n, g, o // g, *out[2:]), lw.out_dtype()
        )
        return _bias(lw, lw.reshape(y, out), bias)
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
    return _bias(lw, lw.reshape(y, out), bias)


def _bias(lw, y: Value, bias):
    if bias is None:
        return y
    bias = tensor(lw, bias)
    n, c = y.shape[:2]
    s = y.numel // (n * c)
    r = lw.call("add_channel_bias", [lw.reshape(y, (n, c, s)).var, bias.var], (n, c, s), y.dtype)
    return lw.reshape(r, y.shape)


# ---------------------------------------------------------------------------- reductions
def _mid(lw, x: Value, dims):
    """Reshape x to [A, R, B] with R the product of `dims` (which must be contiguous;
    otherwise they are permuted to the end first)."""
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


def _reduce(kernel: str, int_out: bool = False):
    def lower_reduce(lw, x, dims=None, keepdim=False, **kwargs):
        x = tensor(lw, x)
        if isinstance(dims, int):
            dims = [dims]
        mid, (a, _, b) = _mid(lw, x, dims or [])
        dtype = lw.out_dtype()
        y = lw.call(kernel, [mid.var], (a, b), dtype, kernel_dtype="fp32" if int_out else dtype)
        return lw.reshape(y, lw.out_shape())

    return lower_reduce


RULES["aten.sum.dim_IntList"] = _reduce("sum_mid")
RULES["aten.sum.default"] = _reduce("sum_mid")
RULES["aten.mean.dim"] = _reduce("mean_mid")
RULES["aten.mean.default"] = _reduce("mean_mid")
RULES["aten.amax.default"] = _reduce("amax_mid")
RULES["aten.amin.default"] = _reduce("amin_mid")
RULES["aten.prod.dim_int"] = _reduce("prod_mid")
RULES["aten.argmax.default"] = _reduce("argmax_mid", int_out=True)
RULES["aten.argmin.default"] = _reduce("argmin_mid", int_out=True)


def _along(kernel: str):
    def lower_along(lw, x, dim, *args, **kwargs):
        x = tensor(lw, x)
        mid, shape3 = _mid(lw, x, [dim])
        y = lw.call(kernel, [mid.var], shape3, lw.out_dtype())
        return lw.reshape(y, lw.out_shape())

    return lower_along


RULES["aten._softmax.default"] = _along("softmax_mid")
RULES["aten._log_softmax.default"] = _along("log_softmax_mid")
RULES["aten.cumsum.default"] = _along("cumsum_mid")
RULES["aten.cumprod.default"] = _along("cumprod_mid")


# ---------------------------------------------------------------------------- normalisation
@rule("aten.native_layer_norm.default")
def _layer_norm(lw, x, normalized_shape, w, b, eps):
    x = tensor(lw, x)
    d = 1
    for s in normalized_shape:
        d *= s
    x2 = lw.reshape(x, (x.numel // d, d))
    shape = lw.out_shape(0)
    if w is None and b is None:
        y = lw.call("layer_norm_nobias", [x2.var, float(eps)], x2.shape, lw.out_dtype(0))
    else:
        wv = lw.reshape(tensor(lw, w), (d,)) if w is not None else _const(lw, 1.0, (d,))
        bv = lw.reshape(tensor(lw, b), (d,)) if b is not None else _const(lw, 0.0, (d,))
        y = lw.call("layer_norm", [x2.var, wv.var, bv.var, float(eps)], x2.shape, lw.out_dtype(0))
    return (lw.reshape(y, shape), _unused(lw, "mean"), _unused(lw, "rstd"))


def _const(lw, value, shape):
    names = [f"c{i}" for i in range(len(shape))]
    var = lw.fresh()
    sizes = "".join(f", {n}={s}" for n, s in zip(names, shape, strict=True))
    lw.emit(f'{var} = constant({value!r}, "{",".join(names)}"{sizes})')
    return Value(var, tuple(shape), "fp32")


def _unused(lw, what):
    return _Unused(lw, what)


class _Unused:
    """An operator result the lowering does not produce (saved statistics for backward)."""

    def __init__(self, lw, what):
        self.what = what
        self.op = str(lw.node.target)


@rule("aten._native_batch_norm_legit_functional.default")
def _batch_norm_functional(lw, x, w, b, rm, rv, training, momentum, eps):
    out = _batch_norm(lw, x, w, b, rm, rv, training, eps)
    return (
        out,
        _unused(lw, "save_mean"),
        _unused(lw, "save_invstd"),
        _unused(lw, "running_mean"),
        _unused(lw, "running_var"),
    )


@rule("aten._native_batch_norm_legit_no_training.default")
def _batch_norm_eval(lw, x, w, b, rm, rv, momentum, eps):
    return (_batch_norm(lw, x, w, b, rm, rv, False, eps), _unused(lw, "a"), _unused(lw, "b"))


@rule("aten._native_batch_norm_legit.no_stats", "aten._native_batch_norm_legit.default")
def _batch_norm_legit(lw, x, w, b, *args):
    eps = args[-1]
    return (_batch_norm(lw, x, w, b, None, None, True, eps), _unused(lw, "a"), _unused(lw, "b"))


def _batch_norm(lw, x, w, b, rm, rv, training, eps):
    x = tensor(lw, x)
    n, c = x.shape[:2]
    s = x.numel // (n * c)
    x3 = lw.reshape(x, (n, c, s))
    wv = tensor(lw, w) if w is not None else _const(lw, 1.0, (c,))
    bv = tensor(lw, b) if b is not None else _const(lw, 0.0, (c,))
    dtype = lw.out_dtype(0) if isinstance(lw.out_meta(), (list, tuple)) else lw.out_dtype()
    if training:
        y = lw.call("batch_norm_train", [x3.var, wv.var, bv.var, float(eps)], x3.shape, dtype)
    else:
        y = lw.call(
            "batch_norm_eval",
            [x3.var, wv.var, bv.var, tensor(lw, rm).var, tensor(lw, rv).var, float(eps)],
            x3.shape,
            dtype,
        )
    return lw.reshape(y, x.shape)


@rule("aten.native_group_norm.default")
def _group_norm(lw, x, w, b, n, c, hxw, group, eps):
    x = tensor(lw, x)
    g = int(group)
    x4 = lw.reshape(x, (n, g, c // g, hxw))
    wv = lw.reshape(tensor(lw, w), (g, c // g)) if w is not None else _const(lw, 1.0, (g, c // g))
    bv = lw.reshape(tensor(lw, b), (g, c // g)) if b is not None else _const(lw, 0.0, (g, c // g))
    y = lw.call("group_norm", [x4.var, wv.var, bv.var, float(eps)], x4.shape, lw.out_dtype(0))
    return (lw.reshape(y, x.shape), _unused(lw, "mean"), _unused(lw, "rstd"))


# ---------------------------------------------------------------------------- pooling
def _pool_args(x, kernel, stride, padding):
    kernel = list(kernel) if isinstance(kernel, (list, tuple)) else [kernel] * 2
    if len(kernel) == 1:
        kernel = kernel * 2
    stride = list(stride) if stride else kernel
    if len(stride) == 1:
        stride = stride * 2
    padding = list(padding) if isinstance(padding, (list, tuple)) else [padding] * 2
    if len(padding) == 1:
        padding = padding * 2
    return kernel, stride, padding


@rule("aten.max_pool2d_with_indices.default")
def _max_pool(lw, x, kernel, stride=(), padding=(0, 0), dilation=(1, 1), ceil_mode=False):
    x = tensor(lw, x)
    kernel, stride, padding = _pool_args(x, kernel, stride, padding)
    dilation = list(dilation) if len(dilation) == 2 else list(dilation) * 2
    out = lw.out_shape(0)
    h, w = x.shape[-2:]
    x3 = lw.reshape(x, (x.numel // (h * w), h, w))
    y = lw.call(
        "max_pool2d",
        [x3.var, *kernel, *stride, *padding, *dilation, out[-2], out[-1]],
        (x3.shape[0], out[-2], out[-1]),
        lw.out_dtype(0),
    )
    return (lw.reshape(y, out), _unused(lw, "indices"))


@rule("aten.avg_pool2d.default")
def _avg_pool(
    lw,
    x,
    kernel,
    stride=(),
    padding=(0, 0),
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    if divisor_override is not None:
        lw.fail("avg_pool2d with divisor_override is not supported yet")
    x = tensor(lw, x)
    kernel, stride, padding = _pool_args(x, kernel, stride, padding)
    out = lw.out_shape()
    h, w = x.shape[-2:]
    x3 = lw.reshape(x, (x.numel // (h * w), h, w))
    y = lw.call(
        "avg_pool2d",
        [x3.var, *kernel, *stride, *padding, out[-2], out[-1], 1 if count_include_pad else 0],
        (x3.shape[0], out[-2], out[-1]),
        lw.out_dtype(),
    )
    return lw.reshape(y, out)


@rule("aten._adaptive_avg_pool2d.default", "aten.adaptive_avg_pool2d.default")
def _adaptive_avg(lw, x, output_size):
    x = tensor(lw, x)
    h, w = x.shape[-2:]
    oh, ow = output_size
    if (oh, ow) == (1, 1):
        mid, (a, _, b) = _mid(lw, x, [-2, -1])
        y = lw.call("mean_mid", [mid.var], (a, b), lw.out_dtype())
        return lw.reshape(y, lw.out_shape())
    if h % oh or w % ow:
        lw.fail(
            f"adaptive average pooling from {h}x{w} to {oh}x{ow} (uneven windows) is not "
            "supported yet"
        )
    return _avg_pool(lw, x, [h // oh, w // ow], [h // oh, w // ow], [0, 0])


# ---------------------------------------------------------------------------- indexing
@rule("aten.embedding.default")
def _embedding(lw, weight, indices, *args):
    weight, indices = tensor(lw, weight), tensor(lw, indices)
    var = lw.fresh()
    lw.emit(f"{var} = gather({weight.var}, {indices.var}, dim=0)")
    return Value(var, lw.out_shape(), weight.dtype)


@rule("aten.index_select.default")
def _index_select(lw, x, dim, index):
    x, index = tensor(lw, x), tensor(lw, index)
    axis = _axis(dim, len(x.shape))
    if axis != 0:
        lw.fail("index_select along a dim other than 0 is not supported yet")
    var = lw.fresh()
    lw.emit(f"{var} = gather({x.var}, {index.var}, dim=0)")
    return Value(var, lw.out_shape(), x.dtype)


# ---------------------------------------------------------------------------- dropout
@rule("aten.native_dropout.default")
def _dropout(lw, x, p, train):
    """Training-mode dropout is live: it reads X and writes Y (and its mask). The IR has no
    random numbers, so the lowered program applies dropout's expectation (a mask of ones,
    scale 1): it is counted like the real operator and validated against the PyTorch program
    run with dropout at its expectation (docs/pytorch.md)."""
    x = tensor(lw, x)
    if not train or p == 0:
        return (x, _unused(lw, "mask"))
    lw.notes.append(f"dropout(p={p}) runs at its expectation (identity) in validation")
    shape = lw.out_shape(0)
    mask = _const(lw, 1.0, (x.numel,))
    mask = lw.cast(mask, "bool")
    y = lw.call("dropout", [lw.flat(x).var, mask.var, 1.0], (x.numel,), lw.out_dtype(0))
    return (lw.reshape(y, shape), _unused(lw, "mask"))
