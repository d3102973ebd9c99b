"""Lowering rules: one function per core-ATen operator (keyed by str(OpOverload)).

A rule receives the Lowerer and the operator's arguments (tensors as `Value`s, lists,
Python scalars) and returns a Value (or a tuple for multi-output operators).
docs/pytorch-operators.md lists the operators covered (generated from RULES by
tests/python/test_lowering_ops.py, which checks every rule against PyTorch); anything else is
a clear error naming the operator and the source line. UNSUPPORTED operators (sorting,
scatters, data-dependent shapes) have rules that give that error with the reason.

Counting: MACs only come from contractions (matrix products, convolutions: docs/ir.md §7.2);
sums of squares, index arithmetic for data-dependent indexing and every other reduction are
vector work. Each rule picks the stdlib kernel with the least work for its arguments (a
square for x ** 2, no multiplication by a parameter equal to 1): docs/pytorch-operators.md,
"Counts".
"""

from __future__ import annotations

import math
import operator
import re

from . import ops
from .builder import Builder as Lowerer
from .builder import Value
from .contract import contract, einsum_refusal, lower_einsum
from .narrow import int_mm, scaled_mm, try_block_scaled
from .rules_index import strided_slice_scatter
from .values import Transposed, _axis, _concat, _Unused, is_tensor, tensor

RULES: dict = {}

# Random draws forward() makes: inputs of role "generated" (Lowerer.generated_input), fed at
# validation with the values PyTorch drew, matched by their order in the captured graph.
RANDOM_OPS = (
    "aten.randn.default",
    "aten.rand.default",
    "aten.randn_like.default",
    "aten.rand_like.default",
    "aten.normal.float_float",
    "aten.uniform.default",
    "aten.normal_functional.default",
    "aten.multinomial.default",
)


def source_operator(node) -> tuple[tuple, str]:
    """(identity, label) of the PyTorch call an exported FX node comes from: the node before
    decomposition to core ATen (`from_node` provenance), e.g. the five nodes of
    F.hardsigmoid share ("hardsigmoid", ...) and the label "aten.hardsigmoid"."""
    sources = node.meta.get("from_node") or []
    if sources:
        src = sources[-1]
        key = (getattr(src, "name", node.name), getattr(src, "graph_id", None))
        target = str(getattr(src, "target", node.target))
    else:
        key, target = (node.name, None), str(node.target)
    label = re.sub(r"\.(default|Tensor|Scalar|int|self|dim\w*|\w+_\w+)$", "", target)
    return key, label.replace("::", ".")


def rule(*names):
    def register(fn):
        for n in names:
            RULES[n] = fn
        return fn

    return register


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
    "aten.ceil.default": "ceil_",
    "aten.round.default": "round_",
    "aten.trunc.default": "trunc_",
    "aten.log2.default": "log2_",
    "aten.log10.default": "log10_",
    "aten.exp2.default": "exp2_",
    "aten.sinh.default": "sinh_",
    "aten.cosh.default": "cosh_",
    "aten.tan.default": "tan_",
    "aten.isnan.default": "isnan_",
    "aten.isinf.default": "isinf_",
}
BOOL_KERNELS = {"logical_not", "isnan_", "isinf_"}
for _op, _kernel in UNARY.items():
    RULES[_op] = (lambda k: lambda lw, x: elementwise(lw, k, [x], bool_out=k in BOOL_KERNELS))(
        _kernel
    )


@rule("aten.gelu.default")
def _gelu(lw, x, approximate="none"):
    return elementwise(lw, "gelu_tanh" if approximate == "tanh" else "gelu", [x])


@rule("aten.leaky_relu.default")
def _leaky_relu(lw, x, slope=0.01):
    return elementwise(lw, "leaky_relu", [x], [slope])


@rule("aten.elu.default")
def _elu(lw, x, alpha=1.0, scale=1.0, input_scale=1.0):
    """The ELU family without multiplications by parameters equal to 1 (stdlib: ELU
    `elu_unit` / `elu_alpha`, SELU `elu_scaled`, scale 1 `elu_input`)."""
    if scale == 1 and input_scale == 1:
        if alpha == 1:
            return elementwise(lw, "elu_unit", [x])
        return elementwise(lw, "elu_alpha", [x], [alpha])
    if input_scale == 1:
        return elementwise(lw, "elu_scaled", [x], [alpha, scale])
    if scale == 1:
        return elementwise(lw, "elu_input", [x], [alpha, input_scale])
    return elementwise(lw, "elu", [x], [alpha, scale, input_scale])


@rule("aten.clamp.default")
def _clamp(lw, x, lo=None, hi=None):
    lo = -math.inf if lo is None else lo
    hi = math.inf if hi is None else hi
    return elementwise(lw, "clamp", [x], [lo, hi])


@rule("aten.hardtanh.default")
def _hardtanh(lw, x, lo=-1.0, hi=1.0):
    """clamp(x, lo, hi) with ATen's defaults -1 and 1: torch.export omits integer bounds
    equal to them (F.hardtanh(x, min_val=-1, max_val=1)), which the clamp rule took for no
    bound."""
    return elementwise(lw, "clamp", [x], [lo, hi])


@rule("aten.softplus.default")
def _softplus(lw, x, beta=1.0, threshold=20.0):
    if beta == 1:
        return elementwise(lw, "softplus_unit", [x], [threshold])
    return elementwise(lw, "softplus", [x], [beta, threshold])


@rule("aten.pow.Tensor_Scalar")
def _pow_scalar(lw, x, e):
    if e == 2:  # a square is one mul
        return elementwise(lw, "square", [x])
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
        if is_tensor(a) and scalar_kernel:
            return elementwise(lw, scalar_kernel, [a], [scalar_fn(b * alpha)])
        if is_tensor(b) and kernel in ("add", "mul"):  # commutative: s + x, s * x
            b = elementwise(lw, "mul_scalar", [b], [alpha]) if alpha != 1 else b
            return elementwise(lw, scalar_kernel, [b], [a])
        if is_tensor(b) and kernel == "sub":  # s - alpha * x
            b = elementwise(lw, "mul_scalar", [b], [alpha]) if alpha != 1 else b
            return elementwise(lw, "rsub_scalar", [b], [a])
        if is_tensor(b) and kernel == "div":  # s / x
            return elementwise(lw, "rdiv_scalar", [b], [a])
        lw.fail(f"{lw.node.target} with these operand kinds is not supported")

    return lower_binary


RULES["aten.add.Tensor"] = _binary("add", "add_scalar", lambda s: s)
RULES["aten.add.Scalar"] = RULES["aten.add.Tensor"]
RULES["aten.sub.Tensor"] = _binary("sub", "add_scalar", lambda s: -s)
RULES["aten.mul.Tensor"] = _binary("mul", "mul_scalar", lambda s: s)
RULES["aten.mul.Scalar"] = RULES["aten.mul.Tensor"]
RULES["aten.div.Tensor"] = _binary("div", "div_scalar", lambda s: s)
RULES["aten.div.Scalar"] = RULES["aten.div.Tensor"]
RULES["aten.sub.Scalar"] = RULES["aten.sub.Tensor"]
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
    "aten.squeeze.dims",
    "aten.squeeze.dim",
    "aten.squeeze.default",
    "aten.unsqueeze.default",
)
def _view(lw, x, *args):
    return lw.reshape(tensor(lw, x), lw.out_shape())


@rule(
    "aten.alias.default",
    "aten.detach.default",
)
def _identity(lw, x, *args, **kwargs):
    return x


# Operators whose lowering already materialises a new tensor (a copying `permute`): a clone of
# their result copies nothing more (eager: `x.t()` is a view and `.contiguous()` the one copy).
_COPIED = {"aten.permute.default", "aten.t.default", "aten.transpose.int"}


@rule("aten.clone.default")
def _clone(lw, x, *args, **kwargs):
    """A real copy when the program asked for one (`x.clone()`, `.contiguous()` of a
    non-contiguous view): eager reads and writes the tensor, so the unfused mode counts that
    copy. A clone that a decomposition introduces is free where eager makes none (dropout in
    eval mode; a transposed matmul operand, read in place) and a copy where eager must
    materialise: a broadcast input (`repeat_interleave`), or a non-contiguous one returned
    through views."""
    _, label = source_operator(lw.node)
    src = lw.node.args[0]
    if isinstance(x, Transposed):
        return x
    if getattr(src, "op", "") == "call_function" and str(src.target) in _COPIED:
        return x  # the IR's permute already copies
    if label not in ("aten.clone", "aten.contiguous") and not _materialises(src, lw.node):
        return x
    return elementwise(lw, "copy", [x])


# Operators whose result is a view of their input (no data moves).
_VIEW_OPS = {
    f"aten.{op}"
    for op in (
        "view.default",
        "_unsafe_view.default",
        "reshape.default",
        "unsqueeze.default",
        "squeeze.dim",
        "squeeze.dims",
        "squeeze.default",
        "permute.default",
        "transpose.int",
        "t.default",
        "expand.default",
        "slice.Tensor",
        "select.int",
        "alias.default",
    )
}


def _materialises(src, clone) -> bool:
    """Whether a clone that a decomposition introduced is a copy that eager makes too (the
    clones of a program's own `.clone()` and `.contiguous()` always are). Free where the input
    is contiguous (eager's dropout in eval mode returns its input). A copy where the input is
    broadcast (a zero stride over more than one element: repeat_interleave's and repeat_kv's
    expand, clone and view; nothing can hold that as a view) or is non-contiguous and the clone
    reaches the program's outputs through views only (the output cannot be its input). A
    permuted input read by a computation stays a view (matmul's clone before bmm): eager's
    copy there stays inside the operator's unit, and a fused implementation reads in place."""
    val = getattr(src, "meta", {}).get("val")
    try:
        if not hasattr(val, "is_contiguous") or val.is_contiguous():
            return False
        if any(st == 0 and n > 1 for st, n in zip(val.stride(), val.shape, strict=True)):
            return True
    except (RuntimeError, TypeError):  # a layout without strides: as before, free
        return False
    users, seen = list(clone.users), set()
    while users:
        u = users.pop()
        if u in seen:
            continue
        seen.add(u)
        if u.op == "output":
            return True
        if u.op == "call_function" and (str(u.target) in _VIEW_OPS or u.target is operator.getitem):
            users.extend(u.users)
    return False


@rule("aten.view.dtype")
def _view_dtype(lw, x, dtype):
    return lw.bitcast(tensor(lw, x), lw.out_dtype(), lw.out_shape())


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
    products = {"aten.mm.default", "aten.bmm.default"}  # read either operand transposed

    def reads_in_place(u) -> bool:
        if str(u.target) in products and u.args[0] is lw.node:
            return True
        if str(u.target) in ("aten._scaled_mm.default", "aten._int_mm.default"):
            # b [K, N], read as [N, K] (narrow.py)
            return u.args[1] is lw.node and lw.node not in (u.args[0], *u.args[2:])
        return str(u.target) in mm_ops and u.args[-1] is lw.node and lw.node not in u.args[:-1]

    if swap_last and users and all(reads_in_place(u) for u in users):
        return Transposed(x.var, tuple(x.shape[o] for o in order), x.dtype, base=x, order=order)
    if users and all(u.op == "output" for u in users):
        # Returned as it is: PyTorch hands back a strided view and moves nothing.
        return lw.permute(x, order, view=True)
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
        return lw.cast(parts[0], lw.out_dtype())
    # torch.cat promotes to one dtype; the IR's concat takes one dtype (docs/ir.md §5).
    parts = [lw.cast(p, lw.out_dtype()) for p in parts]
    var = lw.fresh()
    lw.emit(f"{var} = concat([{', '.join(p.var for p in parts)}], dim={axis})")
    return Value(var, lw.out_shape(), lw.out_dtype())


@rule("aten.split_with_sizes.default")
def _split_sizes(lw, x, sizes, dim=0):
    return ops.split(lw, x, sizes, _axis(dim, len(tensor(lw, x).shape)))


@rule("aten.split.Tensor")
def _split_tensor(lw, x, size, dim=0):
    x = tensor(lw, x)
    axis = _axis(dim, len(x.shape))
    n = x.shape[axis]
    return ops.split(lw, x, [min(size, n - s) for s in range(0, n, size)], axis)


@rule("aten.constant_pad_nd.default")
def _pad(lw, x, pad, value=0.0):
    x = tensor(lw, x)
    rank = len(x.shape)
    for i in range(0, len(pad), 2):
        axis = rank - 1 - i // 2
        before, after = pad[i], pad[i + 1]
        if before < 0 or after < 0:  # a negative pad crops that side (F.pad's semantics)
            # (PyTorch refuses a crop that leaves nothing before the export.)
            start, stop = max(0, -before), x.shape[axis] - max(0, -after)
            var = lw.fresh()
            lw.emit(f"{var} = slice({x.var}, dim={axis}, start={start}, stop={stop}, step=1)")
            shape = list(x.shape)
            shape[axis] = stop - start
            x = Value(var, tuple(shape), x.dtype)
            before, after = max(0, before), max(0, after)
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
    return ops.const_typed(lw, value, lw.out_shape(), lw.out_dtype())


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
    """A matrix product reading a transposed operand (a folded permute) in place: `_nt`
    (the second), `_tn` (the first), `_tt` (both)."""
    if not batched and (scaled := try_block_scaled(lw, a, b)) is not None:
        return scaled  # dequantised narrow codes: a block-scaled narrow GEMM (narrow.py)
    ta, tb = isinstance(a, Transposed), isinstance(b, Transposed)
    suffix = {(False, False): "", (False, True): "_nt", (True, False): "_tn", (True, True): "_tt"}
    kernel = ("bmm" if batched else "mm") + suffix[ta, tb]
    args = [(v.base if isinstance(v, Transposed) else tensor(lw, v)).var for v in (a, b)]
    band = lw.bands.get(lw.node.name) if lw.bands and batched and not ta else None
    if band is not None:  # a masked attention's product (masks.py): only inside the band
        kernel = ("bmm_band" if band.axis == "out" else "bmm_kband") + suffix[ta, tb]
        args += band.args()
    return lw.call(kernel, args, lw.out_shape(), lw.out_dtype())


@rule("aten.mm.default")
def _mm(lw, a, b):
    return _mm_like(lw, a, b, False)


@rule("aten.bmm.default")
def _bmm(lw, a, b):
    return _mm_like(lw, a, b, True)


@rule("aten._scaled_mm.default")
def _scaled_mm(
    lw, a, b, scale_a, scale_b, bias=None, scale_result=None, out_dtype=None, use_fast_accum=False
):
    """fp8 operands with per-tensor or row-wise scales (the fp8 rate), NVFP4 operands
    (float4_e2m1fn_x2) with swizzled e4m3 scales per 16 of K (the fp4 rate, the scales on the
    matrix unit): docs/sol-modes.md, "Narrow math inside a program"."""
    # The bias is added in the output dtype after the scaled product, as cuBLAS's epilogue
    # does.
    if scale_result is not None:
        lw.fail("torch._scaled_mm with scale_result is not supported")
    c = scaled_mm(lw, a, b, scale_a, scale_b)
    if bias is None:
        return c
    return elementwise(lw, "add", [c, bias])


@rule("aten._int_mm.default")
def _int_mm(lw, a, b):
    """int8 operands into int32 (torchao's dynamic int8 quantisation), at the int8 rate."""
    return int_mm(lw, a, b)


@rule("aten.addmm.default")
def _addmm(lw, bias, a, b, beta=1, alpha=1):
    bias = tensor(lw, bias)
    a = tensor(lw, a)
    n = lw.out_shape()[1]
    if (scaled := try_block_scaled(lw, a, b)) is not None:
        # dequantised narrow codes (narrow.py): the bias added after the block-scaled GEMM
        if alpha != 1:
            scaled = elementwise(lw, "mul_scalar", [scaled], [alpha])
        if beta != 1:
            bias = elementwise(lw, "mul_scalar", [bias], [beta])
        return elementwise(lw, "add", [scaled, bias])
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


# ---------------------------------------------------------------------------- reductions
@rule("aten.convolution_backward.default")
def _convolution_backward(
    lw, gy, x, w, bias_sizes, stride, padding, dilation, transposed, output_padding, groups, mask
):
    """A training step's 2-D convolution backward: the input gradient is the transposed
    convolution of the output gradient with the same weight, the weight gradient
    `conv2d_wgrad` (each as many MACs as the forward convolution), the bias gradient the sum
    of the output gradient over batch and space."""
    gy, x, w = tensor(lw, gy), tensor(lw, x), tensor(lw, w)
    if len(x.shape) != 4 or transposed:
        lw.fail("convolution_backward is supported for 2-D, non-transposed convolutions")
    g = int(groups)
    n, c, h, wd = x.shape
    o, _, kr, ks = w.shape
    p_, q_ = gy.shape[2:]
    sh, sw = ops.per_dim(stride, 2)
    ph, pw = ops.per_dim(padding, 2)
    dh, dw = ops.per_dim(dilation, 2)
    out = []
    if mask[0]:
        # output_padding recovers the input size the strided forward convolution dropped.
        oph = h - ((p_ - 1) * sh - 2 * ph + dh * (kr - 1) + 1)
        opw = wd - ((q_ - 1) * sw - 2 * pw + dw * (ks - 1) + 1)
        gyg = lw.reshape(gy, (n, g, o // g, p_, q_))
        wg = lw.reshape(w, (g, o // g, c // g, kr, ks))
        gx = lw.call(
            "conv_transpose2d",
            [gyg.var, wg.var, sh, sw, ph, pw, dh, dw, oph, opw],
            (n, g, c // g, h, wd),
            lw.out_dtype(0),
        )
        out.append(lw.reshape(gx, x.shape))
    else:
        out.append(_unused(lw, "grad_input"))
    if mask[1]:
        xg = lw.reshape(x, (n, g, c // g, h, wd))
        gyg = lw.reshape(gy, (n, g, o // g, p_, q_))
        gw = lw.call(
            "conv2d_wgrad",
            [xg.var, gyg.var, kr, ks, sh, sw, ph, pw, dh, dw],
            (g, o // g, c // g, kr, ks),
            lw.out_dtype(1),
        )
        out.append(lw.reshape(gw, w.shape))
    else:
        out.append(_unused(lw, "grad_weight"))
    if len(mask) > 2 and mask[2]:
        mid, (a, _, b) = ops.around(lw, lw.reshape(gy, (n, o, p_ * q_)), [0, 2])
        gb = lw.call("sum_mid", [mid.var], (a, b), lw.out_dtype(2))
        out.append(lw.reshape(gb, (o,)))
    else:
        out.append(_unused(lw, "grad_bias"))
    return tuple(out)


RULES["aten.sum.dim_IntList"] = ops.reduce("sum_mid")
RULES["aten.sum.default"] = ops.reduce("sum_mid")
RULES["aten.mean.dim"] = ops.reduce("mean_mid")
RULES["aten.mean.default"] = ops.reduce("mean_mid")


# ---------------------------------------------------------------------------- contractions
# A product summed over a dim both factors span, `(a[:, :, None] * b[:, None]).sum(-1)`, is a
# contraction however it is written: the mul is not lowered (its result is never formed) and
# the sum or mean lowers both as one generated kernel reading a and b as they are before
# broadcasting (contract.py). docs/sol-modes.md, "Contraction forms".
_SUMS = {"aten.sum.dim_IntList", "aten.sum.default", "aten.mean.dim", "aten.mean.default"}
# Operators that only broadcast or add and drop dims of size 1: the factors are read through
# them (`x[:, None]`, `x.unsqueeze(1).expand(...)`).
_BROADCASTS = {
    "aten.expand.default",
    "aten.unsqueeze.default",
    "aten.squeeze.dim",
    "aten.squeeze.dims",
    "aten.squeeze.default",
    "aten.view.default",
    "aten._unsafe_view.default",
    "aten.reshape.default",
}


class _Product:
    """A mul whose only user sums it over a dim both factors span: the factors before
    broadcasting, each with the dims of the product its dims are (None for a dim of size
    1), lowered by the sum (`_summed_product`)."""

    def __init__(self, factors, shape):
        self.factors = factors  # [(Value, [product dim | None per dim])] for a and b
        self.shape = shape  # the product's shape


def _node_shape(node):
    val = node.meta.get("val") if hasattr(node, "meta") else None
    return tuple(int(s) for s in val.shape) if hasattr(val, "shape") else None


def _unbroadcast(lw, arg, rank: int):
    """(Value, [product dim or None per dim]) of a factor read through the operators that
    only broadcast it or add dims of size 1; None when it is not a tensor."""
    shape = _node_shape(arg)
    if shape is None or not isinstance(lw.values.get(arg.name), Value):
        return None
    pos = [rank - len(shape) + j for j in range(len(shape))]
    node = arg
    while str(getattr(node, "target", "")) in _BROADCASTS:
        src = node.args[0]
        src_shape = _node_shape(src)
        if src_shape is None or not isinstance(lw.values.get(getattr(src, "name", "")), Value):
            break
        if isinstance(lw.values[src.name], Transposed):
            break
        if str(node.target) == "aten.expand.default":
            off = len(shape) - len(src_shape)
            if off < 0:
                break
            pos = [pos[off + j] if src_shape[j] != 1 else None for j in range(len(src_shape))]
        else:
            a = [j for j, n in enumerate(src_shape) if n != 1]
            b = [j for j, n in enumerate(shape) if n != 1]
            if [src_shape[j] for j in a] != [shape[j] for j in b]:
                break
            new = [None] * len(src_shape)
            for ja, jb in zip(a, b, strict=True):
                new[ja] = pos[jb]
            pos = new
        node, shape = src, src_shape
    value = lw.values[node.name]
    if isinstance(value, Transposed) or tuple(value.shape) != shape:
        return None
    return value, [p if n != 1 else None for p, n in zip(pos, shape, strict=True)]


def _summed_product(lw, a, b):
    """A _Product when the current mul is a contraction (module comment), else None: the
    sum's dims include one both factors span (K), every summed dim is spanned by both, and a
    kept dim is spanned by one factor alone (M or N: a matrix product or a matrix-vector
    one; `(x * y).sum(-1)` of equal shapes, a batched dot, stays a product and a sum, as a
    sum of squares does)."""
    node = lw.node
    users = list(node.users)
    if len(users) != 1 or str(users[0].target) not in _SUMS or users[0].args[0] is not node:
        return None
    if not (is_tensor(a) and is_tensor(b)) or len(node.args) != 2 or node.kwargs:
        return None
    if node.args[0] is node.args[1]:
        return None  # a sum of squares stays vector work (module docstring)
    total = users[0]
    shape = lw.out_shape()
    dtype = lw.out_dtype()
    out_val = total.meta.get("val")
    if (
        dtype not in ("fp32", "fp16", "bf16", "fp64")
        or a.dtype != dtype
        or b.dtype != dtype
        or out_val is None
        or lw.ir_dtype(out_val.dtype) != dtype
        or total.kwargs.get("dtype") is not None
    ):
        return None
    dims = total.args[1] if len(total.args) > 1 else total.kwargs.get("dim")
    if isinstance(dims, int):
        dims = [dims]
    summed = {_axis(d, len(shape)) for d in dims} if dims else set(range(len(shape)))
    factors = [_unbroadcast(lw, arg, len(shape)) for arg in node.args]
    if any(f is None for f in factors):
        return None
    read = [[p for p in pos if p is not None] for _, pos in factors]
    spans = [set(r) for r in read]
    if any(len(s) != len(r) for s, r in zip(spans, read, strict=True)):
        return None  # a dim of the product read twice by one factor
    big = {d for d in summed if shape[d] != 1}
    if not big & spans[0] & spans[1]:
        return None  # no dim both factors span is summed: no contraction
    if any((d in spans[0]) != (d in spans[1]) for d in big):
        return None  # a summed dim only one factor spans: left as a product and a sum
    if not (spans[0] ^ spans[1]) - summed:
        return None  # no dim one factor alone spans: a batched dot, elementwise work
    return _Product(factors, shape)


_plain_mul = _binary("mul", "mul_scalar", lambda s: s)


def _mul(lw, a, b):
    product = _summed_product(lw, a, b)
    return product if product is not None else _plain_mul(lw, a, b)


def _reduce_or_contract(kernel: str):
    plain = ops.reduce(kernel)

    def lower(lw, x, dims=None, keepdim=False, **kwargs):
        if not isinstance(x, _Product):
            return plain(lw, x, dims, keepdim, **kwargs)
        rank = len(x.shape)
        if isinstance(dims, int):
            dims = [dims]
        summed = {_axis(d, rank) for d in dims} if dims else set(range(rank))
        (a, a_pos), (b, b_pos) = x.factors
        dtype = lw.out_dtype()
        out = [d for d in range(rank) if d not in summed]
        y = contract(lw, a, a_pos, b, b_pos, out, dtype)
        lw.unit_contraction = True  # its unit's fp32 math is a matmul's (lower.py)
        if kernel == "mean_mid":
            count = math.prod(x.shape[d] for d in summed)
            y = elementwise(lw, "mul_scalar", [lw.reshape(y, lw.out_shape())], [1.0 / count])
        return lw.reshape(y, lw.out_shape())

    return lower


RULES["aten.mul.Tensor"] = _mul
RULES["aten.sum.dim_IntList"] = _reduce_or_contract("sum_mid")
RULES["aten.sum.default"] = _reduce_or_contract("sum_mid")
RULES["aten.mean.dim"] = _reduce_or_contract("mean_mid")
RULES["aten.mean.default"] = _reduce_or_contract("mean_mid")


@rule("aten.einsum.default")
def _einsum(lw, equation, operands, path=None):
    """torch.einsum, kept whole by the capture (capture.py, `_decompositions`): contraction
    kernels reading the operands in place (contract.py), pairwise in torch's order; a
    diagonal and a masked attention's einsums keep torch's decomposition (docs/sol-modes.md,
    "Contraction forms")."""
    operands = [tensor(lw, v) for v in operands]
    why = einsum_refusal(equation, [v.shape for v in operands])
    if why:
        lw.fail(f"internal: einsum '{equation}' was kept whole but {why}")
    y = lower_einsum(lw, equation, operands, lw.out_dtype(), path)
    return lw.reshape(y, lw.out_shape())


RULES["aten.amax.default"] = ops.reduce("amax_mid")
RULES["aten.amin.default"] = ops.reduce("amin_mid")
RULES["aten.prod.dim_int"] = ops.reduce("prod_mid")
RULES["aten.argmax.default"] = ops.reduce("argmax_mid", int_out=True)
RULES["aten.argmin.default"] = ops.reduce("argmin_mid", int_out=True)


RULES["aten._softmax.default"] = ops.along("softmax_mid")
RULES["aten._log_softmax.default"] = ops.along("log_softmax_mid")
RULES["aten.cumsum.default"] = ops.along("cumsum_mid")
RULES["aten.cumprod.default"] = ops.along("cumprod_mid")


# ---------------------------------------------------------------------------- normalisation
@rule("aten.native_layer_norm.default")
def _layer_norm(lw, x, normalized_shape, w, b, eps):
    x = tensor(lw, x)
    d = 1
    for s in normalized_shape:
        d *= s
    x2 = lw.reshape(x, (x.numel // d, d))
    shape = lw.out_shape(0)
    used = {
        u.args[1]
        for u in lw.node.users
        if u.target is operator.getitem and u.name in getattr(lw, "needed", ())
    }
    if used & {1, 2}:  # a training step: the backward reads the row statistics
        wv = lw.reshape(tensor(lw, w), (d,)) if w is not None else _const(lw, 1.0, (d,))
        bv = lw.reshape(tensor(lw, b), (d,)) if b is not None else _const(lw, 0.0, (d,))
        rows = (x.numel // d,)
        y, mean, rstd = call_multi(
            lw,
            "layer_norm_saved",
            [x2.var, wv.var, bv.var, float(eps)],
            [x2.shape, rows, rows],
            [lw.out_dtype(0), lw.out_dtype(1), lw.out_dtype(2)],
            lw.out_dtype(0),
        )
        return (
            lw.reshape(y, shape),
            lw.reshape(mean, lw.out_shape(1)),
            lw.reshape(rstd, lw.out_shape(2)),
        )
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


@rule("aten._native_batch_norm_legit_functional.default")
def _batch_norm_functional(lw, x, w, b, rm, rv, training, momentum, eps):
    """Training mode with running statistics. torch.export shows the buffer updates as
    results 3 and 4; when the program keeps them (a whole module: they are buffer mutations
    of the exported graph), `batch_norm_train_stats` also computes them, reading and writing
    the running mean and variance."""
    used = {
        u.args[1]
        for u in lw.node.users
        if u.target is operator.getitem and u.name in getattr(lw, "needed", ())
    }
    if training and used & {1, 2}:  # a training step: the backward reads the statistics
        return _batch_norm_saved(lw, x, w, b, rm, rv, momentum, eps)
    if training and used & {3, 4}:
        return _batch_norm_with_stats(lw, x, w, b, rm, rv, momentum, eps)
    out = _batch_norm(lw, x, w, b, rm, rv, training, eps)
    return (
        out,
        _unused(lw, "save_mean"),
        _unused(lw, "save_invstd"),
        _unused(lw, "running_mean"),
        _unused(lw, "running_var"),
    )


def _batch_norm_stats_call(lw, kernel, x, w, b, rm, rv, momentum, eps, saved: bool):
    """Training-mode batch norm that updates the running statistics (`kernel`
    batch_norm_train_stats), and with `saved` also returns the batch mean and inverse standard
    deviation a training step's backward reads (batch_norm_train_saved): the five results of
    _native_batch_norm_legit_functional, those not produced as _Unused."""
    x, rm, rv = tensor(lw, x), tensor(lw, rm), tensor(lw, rv)
    n, c = x.shape[:2]
    x3 = lw.reshape(x, (n, c, x.numel // (n * c)))
    wv = tensor(lw, w) if w is not None else _const(lw, 1.0, (c,))
    bv = tensor(lw, b) if b is not None else _const(lw, 0.0, (c,))
    results = (0, 1, 2, 3, 4) if saved else (0, 3, 4)
    dtype = lw.out_dtype(0)
    values = call_multi(
        lw,
        kernel,
        [x3.var, wv.var, bv.var, rm.var, rv.var, float(momentum), float(eps)],
        [x3.shape] + [(c,)] * (len(results) - 1),
        [lw.out_dtype(i) for i in results],
        dtype,
    )
    out = dict(zip(results, values, strict=True))
    out[0] = lw.reshape(out[0], x.shape)
    names = ("y", "save_mean", "save_invstd", "running_mean", "running_var")
    return tuple(out[i] if i in out else _unused(lw, names[i]) for i in range(5))


def _batch_norm_with_stats(lw, x, w, b, rm, rv, momentum, eps):
    return _batch_norm_stats_call(
        lw, "batch_norm_train_stats", x, w, b, rm, rv, momentum, eps, saved=False
    )


def _batch_norm_saved(lw, x, w, b, rm, rv, momentum, eps):
    return _batch_norm_stats_call(
        lw, "batch_norm_train_saved", x, w, b, rm, rv, momentum, eps, saved=True
    )


@rule("aten._native_batch_norm_legit_no_training.default")
def _batch_norm_eval(lw, x, w, b, rm, rv, momentum, eps):
    return (_batch_norm(lw, x, w, b, rm, rv, False, eps), _unused(lw, "a"), _unused(lw, "b"))


@rule("aten._native_batch_norm_legit.no_stats")
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
def _pool_args(kernel, stride, padding, nd: int = 2, dilation=None):
    """Per-dim lists (PyTorch accepts one value for all dims; an empty stride means the
    kernel size)."""

    def per_dim(v, default):
        if v is None or (isinstance(v, (list, tuple)) and len(v) == 0):
            v = default
        v = list(v) if isinstance(v, (list, tuple)) else [v]
        return [int(x) for x in (v * nd if len(v) == 1 else v)]

    kernel = per_dim(kernel, [1])
    return kernel, per_dim(stride, kernel), per_dim(padding, [0]), per_dim(dilation, [1])


def _avg_bounds(sizes, padding, count_include_pad):
    """The [lo, hi) positions whose taps the divisor counts, per dim."""
    out = []
    for size, pad in zip(sizes, padding, strict=True):
        out += [-pad, size + pad] if count_include_pad else [0, size]
    return out


@rule("aten.max_pool2d_with_indices.default", "aten.max_pool3d_with_indices.default")
def _max_pool(lw, x, kernel, stride=(), padding=0, dilation=1, ceil_mode=False):
    """Max pooling (ceil_mode included: the output size comes from PyTorch, and taps outside
    the input are skipped by the guards). The indices (of the first maximum, flat in the
    input plane) are produced only when the program reads them, as a training step's
    backward does (2-D: `max_pool2d_idx`)."""
    x = tensor(lw, x)
    nd = 3 if "3d" in str(lw.node.target) else 2
    kernel, stride, padding, dilation = _pool_args(kernel, stride, padding, nd, dilation)
    out = lw.out_shape(0)
    xf = ops.fold_spatial(lw, x, nd)
    args = [xf.var, *kernel, *stride, *padding, *dilation, *out[-nd:]]
    oshape = (xf.shape[0], *out[-nd:])
    if nd == 2 and any(
        u.target is operator.getitem and u.args[1] == 1 for u in getattr(lw.node, "users", ())
    ):
        y, idx = call_multi(
            lw, "max_pool2d_idx", args, [oshape] * 2, [lw.out_dtype(0), "int64"], lw.out_dtype(0)
        )
        return lw.reshape(y, out), lw.reshape(idx, out)
    y = lw.call(f"max_pool{nd}d", args, oshape, lw.out_dtype(0))
    return (lw.reshape(y, out), _unused(lw, "indices"))


@rule("aten.max_pool2d_with_indices_backward.default")
def _max_pool_backward(lw, grad, x, kernel, stride, padding, dilation, ceil_mode, indices):
    """The input gradient of a 2-D max pool: each output's gradient added at the position its
    window took the maximum from (the forward's indices, flat in the input plane), into
    zeros: `scatter_add` along the plane (overlapping windows add up, as in PyTorch)."""
    grad, x, indices = tensor(lw, grad), tensor(lw, x), tensor(lw, indices)
    planes, area = math.prod(x.shape[:-2]), x.shape[-2] * x.shape[-1]
    taken = math.prod(grad.shape[-2:])
    zeros = ops.const_typed(lw, 0.0, (planes, area), grad.dtype)
    index = lw.reshape(indices, (planes, taken))
    src = lw.reshape(grad, (planes, taken))
    return lw.reshape(ops.scatter_into(lw, "scatter_add", zeros, 1, index, src), x.shape)


@rule("aten.avg_pool2d.default", "aten.avg_pool3d.default")
def _avg_pool(
    lw,
    x,
    kernel,
    stride=(),
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    x = tensor(lw, x)
    nd = 3 if "3d" in str(lw.node.target) else 2
    kernel, stride, padding, _ = _pool_args(kernel, stride, padding, nd)
    out = lw.out_shape()
    xf = ops.fold_spatial(lw, x, nd)
    oshape = (xf.shape[0], *out[-nd:])
    if divisor_override is not None:
        if nd != 2:
            lw.fail("avg_pool3d with divisor_override is not supported yet")
        y = lw.call(
            "avg_pool2d_div",
            [xf.var, *kernel, *stride, *padding, *out[-nd:], float(divisor_override)],
            oshape,
            lw.out_dtype(),
        )
        return lw.reshape(y, out)
    bounds = _avg_bounds(xf.shape[1:], padding, count_include_pad)
    y = lw.call(
        f"avg_pool{nd}d",
        [xf.var, *kernel, *stride, *padding, *out[-nd:], *bounds],
        oshape,
        lw.out_dtype(),
    )
    return lw.reshape(y, out)


def _adaptive(lw, x: Value, output_size, nd: int, kind: str, dtype: str) -> Value:
    """Adaptive pooling of the last nd dims: a regular pool when every window has the same
    size and stride (input divisible by output), else one dim at a time with gathered
    windows (stdlib/pool.py, adaptive_index)."""
    spatial = x.shape[len(x.shape) - nd :]
    output_size = [spatial[i] if o is None else int(o) for i, o in enumerate(output_size)]
    out = lw.out_shape(0) if kind == "max" else lw.out_shape()
    if all(o == 1 for o in output_size):
        mid, (a, _, b) = ops.around(lw, x, list(range(len(x.shape) - nd, len(x.shape))))
        y = lw.call("amax_mid" if kind == "max" else "mean_mid", [mid.var], (a, b), dtype)
        return lw.reshape(y, out)
    if all(s % o == 0 for s, o in zip(spatial, output_size, strict=True)):
        k = [s // o for s, o in zip(spatial, output_size, strict=True)]
        xf = ops.fold_spatial(lw, x, nd)
        oshape = (xf.shape[0], *output_size)
        if kind == "max":
            args = [xf.var, *k, *k, *([0] * nd), *([1] * nd), *output_size]
            y = lw.call(f"max_pool{nd}d", args, oshape, dtype)
        else:
            bounds = _avg_bounds(spatial, [0] * nd, True)
            y = lw.call(
                f"avg_pool{nd}d",
                [xf.var, *k, *k, *([0] * nd), *output_size, *bounds],
                oshape,
                dtype,
            )
        return lw.reshape(y, out)
    cur = x
    rank = len(x.shape)
    for i in range(nd):
        axis = rank - nd + i
        n_in, n_out = cur.shape[axis], output_size[i]
        if n_in == n_out:
            continue
        kmax = max(-(-(p + 1) * n_in // n_out) - (p * n_in // n_out) for p in range(n_out))
        mid, (a, _, b) = ops.around(lw, cur, [axis])
        var = lw.fresh()
        lw.use_kernel("adaptive_index")
        lw.emit(f"{var} = adaptive_index({n_in}, {n_out}, {kmax})")
        idx = Value(f"{var}[0]", (n_out, kmax), "int64")
        gathered = ops.gather_rows(lw, mid, idx, 1)  # [P, K, A, B]
        if kind == "max":
            y = lw.call("adaptive_max_rows", [gathered.var], (a, n_out, b), dtype)
        else:
            y = lw.call(
                "adaptive_avg_rows", [gathered.var, f"{var}[1]", f"{var}[2]"], (a, n_out, b), dtype
            )
        shape = list(cur.shape)
        shape[axis] = n_out
        cur = lw.reshape(y, shape)
    return lw.reshape(cur, out)


@rule("aten._adaptive_avg_pool2d.default", "aten._adaptive_avg_pool3d.default")
def _adaptive_avg(lw, x, output_size):
    nd = 3 if "3d" in str(lw.node.target) else 2
    return _adaptive(lw, tensor(lw, x), output_size, nd, "avg", lw.out_dtype())


@rule("aten.adaptive_max_pool2d.default", "aten.adaptive_max_pool3d.default")
def _adaptive_max(lw, x, output_size):
    nd = 3 if "3d" in str(lw.node.target) else 2
    y = _adaptive(lw, tensor(lw, x), output_size, nd, "max", lw.out_dtype(0))
    return (y, _unused(lw, "indices"))


# ---------------------------------------------------------------------------- indexing
@rule("aten.embedding.default")
def _embedding(lw, weight, indices, *args):
    weight, indices = tensor(lw, weight), tensor(lw, indices)
    var = lw.fresh()
    lw.emit(f"{var} = gather({weight.var}, {indices.var}, dim=0)")
    return Value(var, lw.out_shape(), weight.dtype)


@rule("aten._embedding_bag.default", "aten._embedding_bag_forward_only.default")
def _embedding_bag(
    lw,
    weight,
    indices,
    offsets,
    scale_grad_by_freq=False,
    mode=0,
    sparse=False,
    per_sample_weights=None,
    include_last_offset=False,
    padding_idx=-1,
):
    """nn.EmbeddingBag / F.embedding_bag with bags of one size L (a 2-D input, whose offsets
    PyTorch makes as arange(0, N·L, L)): `gather` of the N·L rows, then each bag's sum, mean
    or max (`sum_mid`, `mean_mid`, `amax_mid`), per_sample_weights multiplying the rows
    first (`mul`). Bags of data-dependent sizes (a 1-D input with offsets) and padding_idx
    are not expressible: the rows a bag reduces would depend on the data."""
    weight, indices = tensor(lw, weight), tensor(lw, indices)
    bags = None if include_last_offset else _regular_bags(lw.node.args[2], indices.numel)
    if bags is None or padding_idx not in (None, -1) or len(weight.shape) != 2:
        lw.fail(
            "embedding_bag with bags of data-dependent sizes (a 1-D input with offsets) or a "
            "padding_idx is not expressible in the IR; bags of one size (a 2-D input) are",
            "pass the indices as [bags, bag size]",
        )
    size, dim = indices.numel // bags, weight.shape[1]
    rows = ops.gather_rows(lw, weight, lw.flat(indices), 0)  # [bags * size, dim]
    if per_sample_weights is not None:
        w = lw.broadcast_to(
            lw.reshape(tensor(lw, per_sample_weights), (rows.shape[0], 1)), rows.shape
        )
        n = rows.shape[0] * dim
        rows = lw.call("mul", [lw.flat(rows).var, lw.flat(w).var], (n,), weight.dtype)
    kernel = {0: "sum_mid", 1: "mean_mid", 2: "amax_mid"}[int(mode)]
    mid = lw.reshape(rows, (bags, size, dim))
    y = lw.call(kernel, [mid.var], (bags, dim), weight.dtype)
    return y, *(_unused(lw, what) for what in ("offset2bag", "bag_size", "max_indices"))


@rule("aten._embedding_bag_backward.default")
def _embedding_bag_backward(
    lw, grad, indices, offsets, offset2bag, bag_size, max_indices, num_weights, *args, **kw
):
    """The weight gradient of embedding_bag with bags of one size L, sum or mean: each bag's
    gradient row (divided by L for mean) added into the table row of each of its L indices
    (`scatter_add` into zeros, the index broadcast over the row: a view). Max mode's
    gradient goes to the rows that won, which the forward lowering does not produce."""
    names = ("scale_grad_by_freq", "mode", "sparse", "per_sample_weights", "padding_idx")
    opts = dict(zip(names, args, strict=False)) | kw  # the tail may be omitted
    mode, weights = int(opts.get("mode", 0)), opts.get("per_sample_weights")
    grad, indices = tensor(lw, grad), tensor(lw, indices)
    bags = _regular_bags(lw.node.args[2], indices.numel)
    if bags is None or mode == 2 or weights is not None or opts.get("padding_idx", -1) >= 0:
        lw.fail(
            "the gradient of embedding_bag is lowered for bags of one size in sum or mean "
            "mode without per_sample_weights or padding_idx only"
        )
    size, dim = indices.numel // bags, grad.shape[-1]
    rows = lw.reshape(
        lw.broadcast_to(lw.reshape(grad, (bags, 1, dim)), (bags, size, dim)), (bags * size, dim)
    )
    if mode == 1:
        n = bags * size * dim
        rows = lw.reshape(
            lw.call("mul_scalar", [lw.flat(rows).var, repr(1.0 / size)], (n,), grad.dtype),
            rows.shape,
        )
    index = lw.broadcast_to(lw.reshape(indices, (bags * size, 1)), rows.shape)
    zeros = ops.const_typed(lw, 0.0, (int(num_weights), dim), grad.dtype)
    return ops.scatter_into(lw, "scatter_add", zeros, 0, index, rows)


# offset2bag, bag_size and max_indices (results the forward lowering does not produce) are
# arguments it never reads.
_embedding_bag_backward.ignores_unused = True


def _regular_bags(offsets, total: int):
    """The number of bags when `offsets` (an FX node) is arange(0, total, L) with L dividing
    total (PyTorch's offsets for a 2-D input), else None."""
    target = str(getattr(offsets, "target", ""))
    args = list(getattr(offsets, "args", ()))
    if target == "aten.arange.start_step" and len(args) == 3:
        start, end, step = args
    elif target == "aten.arange.start" and len(args) == 2:
        (start, end), step = args, 1
    elif target == "aten.arange.default" and len(args) == 1:
        start, (end,), step = 0, args, 1
    else:
        return None
    if not all(isinstance(v, int) for v in (start, end, step)) or start != 0 or step <= 0:
        return None
    if end != total or total % step:
        return None
    return total // step


@rule(*RANDOM_OPS)
def _random(lw, *args, **kwargs):
    """Random numbers (a random initial state, noise, a sampler's draw by `multinomial`): a
    model() input of role `generated`, no traffic (generated on chip where used) and no
    FLOPs (a lower bound on what a generator, or a sampler reading its probabilities,
    computes); validation runs the IR on the values PyTorch drew."""
    return lw.generated_input(lw.out_shape(), lw.out_dtype())


@rule("aten.sort.default", "aten.sort.stable", "aten.argsort.default", "aten.argsort.stable")
def _sort(lw, x, *args, dim=-1, descending=False, stable=False):
    """torch.sort / argsort: the `topk` builtin with k = the size of dim (largest = descending):
    values and int64 indices, ties in index order (a stable sort, which is also a valid
    unstable one; validating a non-stable sort of integers compares with PyTorch's own tie
    order, which is unspecified: pass stable=True). NaN last ascending, first descending, as
    in PyTorch. Data movement: read x, write both (argsort's sort writes the values too)."""
    if args:  # sort.default / argsort.default: (dim, descending); sort.stable: keywords
        dim, *rest = args
        descending = rest[0] if rest else descending
    x = tensor(lw, x)
    axis = _axis(dim, len(x.shape))
    values, indices = ops.topk(lw, x, x.shape[axis] if x.shape else 1, axis, bool(descending))
    if "argsort" in str(lw.node.target):
        return indices
    return values, indices


@rule("aten.scatter.src", "aten.scatter.value")
def _scatter(lw, x, dim, index, src):
    """torch.scatter (no reduce): the `scatter` builtin. `src` is cut to index's shape (PyTorch
    reads only that corner of it); a scalar src is a constant of index's shape."""
    return ops.scatter_into(lw, "scatter", x, dim, index, src)


@rule("aten.scatter_add.default")
def _scatter_add(lw, x, dim, index, src):
    """torch.scatter_add: the `scatter_add` builtin (every src element is added, duplicate
    indices included; one add each). `src` is cut to index's shape as for scatter."""
    return ops.scatter_into(lw, "scatter_add", x, dim, index, src)


@rule("aten.scatter_reduce.two")
def _scatter_reduce(lw, x, dim, index, src, reduce, include_self=True):
    """torch.scatter_reduce with reduce="sum" and include_self=True: scatter_add. The other
    reductions (prod, mean, amax, amin, or sum without self) are not expressible: the
    `scatter_add` builtin only adds into the base."""
    if reduce != "sum" or not include_self:
        lw.fail(
            f"scatter_reduce with reduce={reduce!r}, include_self={include_self} is not "
            f"expressible in the IR: {_SCATTER}; reduce='sum' with include_self=True is "
            "(scatter_add)",
            "docs/pytorch-operators.md lists the unsupported operators",
        )
    return ops.scatter_into(lw, "scatter_add", x, dim, index, src)


@rule("aten.index_add.default")
def _index_add(lw, x, dim, index, source, alpha=1):
    """torch.index_add: x with alpha * source[..., j, ...] added at x[..., index[j], ...] along
    dim: the `scatter_add` builtin with the 1-D index broadcast to source's shape (a view: the
    index is read once) and source scaled first when alpha is not 1."""
    x, index, source = tensor(lw, x), tensor(lw, index), tensor(lw, source)
    axis = _axis(dim, len(x.shape))
    if alpha != 1:  # at source's shape (elementwise() would broadcast to the output's)
        n = source.numel
        args = [lw.flat(source).var, repr(float(alpha))]
        scaled = lw.call("mul_scalar", args, (n,), source.dtype, kernel_dtype=source.dtype)
        source = lw.reshape(scaled, source.shape)
    shape = (1,) * axis + (index.numel,) + (1,) * (len(source.shape) - axis - 1)
    index = lw.broadcast_to(lw.reshape(index, shape), source.shape)
    return ops.scatter_into(lw, "scatter_add", x, axis, index, source)


@rule("aten.masked_scatter.default")
def _masked_scatter(lw, x, mask, source):
    """x where the mask is false; where it is true, the next element of the source in
    row-major order (a vision-language model's image features placed at the image tokens):
    an integer kernel numbers the true positions (a running count), `gather` fetches those
    elements of the flattened source, `where` merges."""
    x, mask, source = tensor(lw, x), tensor(lw, mask), tensor(lw, source)
    n = x.numel
    m = lw.flat(lw.broadcast_to(mask, x.shape))
    positions = lw.call("masked_positions", [m.var], (n,), "int64", kernel_dtype="fp32")
    taken = ops.gather_rows(lw, lw.flat(source), positions, 0)
    y = lw.call("where", [m.var, taken.var, lw.flat(x).var], (n,), x.dtype, kernel_dtype=x.dtype)
    return lw.reshape(y, x.shape)


@rule("aten.index_select.default")
def _index_select(lw, x, dim, index):
    """gather along `dim`: the builtin puts the index dim first; it moves back to `dim`
    (a copy) unless the dims before it are all of size 1."""
    x, index = tensor(lw, x), tensor(lw, index)
    if not x.shape:
        x = lw.reshape(x, (1,))
    axis = _axis(dim, len(x.shape))
    index = lw.flat(index)
    pre = math.prod(x.shape[:axis])
    post = math.prod(x.shape[axis + 1 :])
    table = lw.reshape(x, (pre, x.shape[axis], post))
    y = ops.gather_rows(lw, table, index, 1)  # [I, pre, post]
    if pre > 1:
        y = lw.permute(y, (1, 0, 2))
    return lw.reshape(y, lw.out_shape())


# ---------------------------------------------------------------------------- dropout
MASK_NOTE = (
    "dropout and other random masks (stochastic depth) are counted live and run at their "
    "expectation in validation"
)


@rule("aten.native_dropout.default")
def _dropout(lw, x, p, train):
    """Training-mode dropout is live: it reads X and writes Y (and its mask). The IR has no
    random numbers, so the lowered program applies dropout's expectation (a mask of ones,
    scale 1): it is counted like the real operator and validated against the PyTorch program
    run with dropout at its expectation (docs/pytorch.md)."""
    x = tensor(lw, x)
    if not train or p == 0:
        return (x, _unused(lw, "mask"))
    lw.notes.append(MASK_NOTE)
    shape = lw.out_shape(0)
    mask = _const(lw, 1.0, (x.numel,))
    mask = lw.cast(mask, "bool")
    y = lw.call("dropout", [lw.flat(x).var, mask.var, 1.0], (x.numel,), lw.out_dtype(0))
    # The mask (all kept, at the expectation) is what a training step's backward reads.
    return (lw.reshape(y, shape), lw.reshape(mask, lw.out_shape(1)))


@rule("aten.bernoulli.p")
def _bernoulli(lw, x, p=0.5, generator=None):
    """A Bernoulli(p) draw of x's shape: the mask of an inplace dropout or of stochastic depth
    (torchvision's StochasticDepth). The IR has no random numbers, so the lowered program
    draws its expectation p (a constant made on chip: no reads; the consumer's traffic is
    counted as for a real mask), and validation runs PyTorch with the same expectation
    (docs/pytorch.md)."""
    lw.notes.append(MASK_NOTE)
    return ops.const_typed(lw, float(p), lw.out_shape(), lw.out_dtype())


@rule("aten.as_strided.default")
def _as_strided(lw, x, size, stride, storage_offset=None):
    """as_strided reads x's storage at offset + sum(i_k * stride_k): a copy kernel with that
    affine index (a restride of a pooled [N, C, 1, 1] tensor, ConvNeXt's and Swin's layer
    norm). The lowered program's values are contiguous, so x must be too (its storage is then
    its own elements in order); a restride of a permuted view is refused."""
    x = tensor(lw, x)
    size = [int(s) for s in size]
    stride = [int(s) for s in stride]
    offset = int(storage_offset or 0)
    src = lw.node.args[0].meta.get("val")
    contiguous = [1] * len(x.shape)
    for k in range(len(x.shape) - 2, -1, -1):
        contiguous[k] = contiguous[k + 1] * x.shape[k + 1]
    if src is not None and (
        int(src.storage_offset()) != 0
        or any(
            int(a) != b for a, b, n in zip(src.stride(), contiguous, x.shape, strict=True) if n > 1
        )
    ):
        lw.fail(
            "as_strided of a non-contiguous view is not supported",
            "make the tensor contiguous (.contiguous()) before restriding it",
        )
    keep = [k for k, n in enumerate(size) if n > 1 and stride[k] != 0]
    hi = offset + sum((size[k] - 1) * stride[k] for k in keep)
    if offset < 0 or hi >= max(x.numel, 1):
        lw.fail(f"as_strided reads element {hi} of a tensor of {x.numel} elements")
    target = [n for n in size]
    natural = [1] * len(size)
    for k in range(len(size) - 2, -1, -1):
        natural[k] = natural[k + 1] * size[k + 1]
    if (
        offset == 0
        and math.prod(size) == x.numel
        and all(stride[k] == natural[k] for k in range(len(size)) if size[k] > 1)
    ):
        return lw.cast(lw.reshape(x, target), lw.out_dtype())  # a plain view
    dtype = x.dtype
    name = f"as_strided_{len(lw.kernels)}"
    dims = [f"D{k}" for k in range(len(size))]
    idx = [f"i{k}" for k in range(len(size))]
    terms = [str(offset)] if offset or not keep else []
    terms += [f"{idx[k]} * {stride[k]}" if stride[k] != 1 else idx[k] for k in keep]
    body = [
        "@kernel",
        f'def {name}(X: Tensor("N", dtype="{dtype}")) -> '
        f'Tensor("{",".join(dims)}", dtype="{dtype}"):',
        "    Y = Tensor("
        + ", ".join(f"{d}={n}" for d, n in zip(dims, size, strict=True))
        + f', dtype="{dtype}")',
    ]
    for k, d in enumerate(dims):
        body.append("    " * (k + 1) + f'for {idx[k]} in Dim("{d}", parallel=True):')
    body.append("    " * (len(dims) + 1) + f"Y[{', '.join(idx)}] = X[{' + '.join(terms)}]")
    body.append("    return Y")
    lw.kernels[name] = "\n".join(body) + "\n"
    var = lw.fresh()
    lw.emit(f"{var} = {name}({lw.flat(x).var})")
    return lw.cast(Value(var, tuple(size), dtype), lw.out_dtype())


# ---------------------------------------------------------------------------- helpers (2)
def call_multi(lw, kernel: str, args, shapes, dtypes, kernel_dtype: str = "fp32"):
    """Calls a kernel with several outputs; returns one Value per output."""
    name = lw.use_kernel(kernel, kernel_dtype)
    var = lw.fresh()
    lw.emit(f"{var} = {name}({', '.join(str(a) for a in args)})")
    return tuple(
        Value(f"{var}[{i}]", tuple(s), d)
        for i, (s, d) in enumerate(zip(shapes, dtypes, strict=True))
    )


# ---------------------------------------------------------------------------- elementwise (2)
def _scalar_or_tensor(tensor_kernel: str, scalar_kernel: str):
    def lower(lw, a, b):
        if is_tensor(b):
            return elementwise(lw, tensor_kernel, [a, b])
        return elementwise(lw, scalar_kernel, [a], [b])

    return lower


RULES["aten.fmod.Scalar"] = _scalar_or_tensor("fmod_tensor", "fmod_scalar")
RULES["aten.fmod.Tensor"] = RULES["aten.fmod.Scalar"]
RULES["aten.remainder.Scalar"] = _scalar_or_tensor("remainder_tensor", "remainder_scalar")
RULES["aten.remainder.Tensor"] = RULES["aten.remainder.Scalar"]
RULES["aten.floor_divide.default"] = _scalar_or_tensor("floor_divide", "floor_divide_scalar")


@rule("aten.div.Tensor_mode")
def _div_mode(lw, a, b, rounding_mode=None):
    if rounding_mode is None:
        return RULES["aten.div.Tensor"](lw, a, b)
    kernel = {"floor": "floor_divide", "trunc": "trunc_divide"}[rounding_mode]
    if is_tensor(b):
        return elementwise(lw, kernel, [a, b])
    return elementwise(lw, kernel + "_scalar", [a], [b])


@rule("aten.pow.Scalar")
def _pow_base_scalar(lw, s, x):
    return elementwise(lw, "rpow_scalar", [x], [s])


@rule("aten.clamp.Tensor")
def _clamp_tensor(lw, x, lo=None, hi=None):
    if lo is not None and hi is not None:
        return elementwise(lw, "clamp_tensor", [x, lo, hi])
    if lo is not None:
        return elementwise(lw, "maximum", [x, lo])
    if hi is not None:
        return elementwise(lw, "minimum", [x, hi])
    return tensor(lw, x)


def _bool_only(kernel: str):
    def lower(lw, *tensors):
        if any(tensor(lw, t).dtype != "bool" for t in tensors):
            lw.fail(f"{lw.node.target} on integer tensors (bitwise arithmetic) is not supported")
        return elementwise(lw, kernel, list(tensors), bool_out=True)

    return lower


# Integer dtypes whose values a kernel's arithmetic (in fp64) holds exactly: bitwise
# operations with a constant are then arithmetic on them, exact in two's complement.
_EXACT_BITS = ("uint8", "int8", "int16", "int32")


def _integer_bits(lw, x, what: str):
    """x, an integer tensor of at most 32 bits, for a bitwise operation with a constant
    (packed 4-bit formats: nvfp4 codes are unpacked with `& 0x0F` and `>> 4`; an fp32
    exponent is kept with `& -8388608`), or a failure naming what is supported."""
    x = tensor(lw, x)
    if x.dtype not in _EXACT_BITS:
        lw.fail(
            f"{lw.node.target} on {x.dtype} tensors (bitwise arithmetic) is not supported; "
            f"{what} on integers of at most 32 bits is (a kernel's arithmetic holds them exactly)"
        )
    return x


@rule("aten.bitwise_and.Scalar")
def _bitwise_and_scalar(lw, x, mask):
    # In two's complement, x & (2^k - 1) is x mod 2^k (floored: never negative), and
    # x & -2^k is x less that, 2^k * floor(x / 2^k): exact.
    m = int(mask)
    if m >= 0 and not (m + 1) & m:
        x = _integer_bits(lw, x, "x & (2^k - 1)")
        return elementwise(lw, "remainder_scalar", [x], [m + 1])
    if m < 0 and not -m & (-m - 1):
        x = _integer_bits(lw, x, "x & -2^k")
        return elementwise(lw, "floor_multiple_scalar", [x], [-m])
    lw.fail(
        f"bitwise_and with {mask}: only masks 2^k - 1 (0x0F, 0xFF, ...) and -2^k (the high "
        "bits: -8388608) are supported"
    )


def _shift_right(lw, x, bits):
    # In two's complement, x >> k (arithmetic) is floor(x / 2^k): exact.
    x = _integer_bits(lw, x, "x >> k with a constant k")
    if is_tensor(bits) or int(bits) < 0:
        lw.fail(f"{lw.node.target}: only a constant, non-negative shift is supported")
    return elementwise(lw, "floor_divide_scalar", [x], [2 ** int(bits)])


RULES["aten.__rshift__.Scalar"] = _shift_right
RULES["aten.bitwise_right_shift.Tensor_Scalar"] = _shift_right
RULES["aten.bitwise_and.Tensor"] = _bool_only("logical_and")
RULES["aten.bitwise_or.Tensor"] = _bool_only("logical_or")
RULES["aten.bitwise_xor.Tensor"] = _bool_only("logical_xor")
RULES["aten.bitwise_not.default"] = _bool_only("logical_not")
RULES["aten.logical_xor.default"] = lambda lw, a, b: elementwise(
    lw, "logical_xor", [a, b], bool_out=True
)


# ---------------------------------------------------------------------------- reductions (2)
def _correction(correction, unbiased=None) -> float:
    if correction is None:
        return 0.0 if unbiased is False else 1.0
    return float(correction)


@rule("aten.var.correction")
def _var(lw, x, dims=None, *, correction=None, keepdim=False):
    x = tensor(lw, x)
    mid, (a, _, b) = ops.around(lw, x, ops.dims_arg(dims, len(x.shape)))
    y = lw.call("var_mid", [mid.var, _correction(correction)], (a, b), lw.out_dtype())
    return lw.reshape(y, lw.out_shape())


@rule("aten.cummax.default", "aten.cummin.default")
def _cummax(lw, x, dim):
    """torch.cummax / cummin: the running extreme along dim and the position it was taken
    from (`cummax_idx_mid`, `cummin_idx_mid`; ties take the later position, NaN propagates)."""
    x = tensor(lw, x)
    kernel = "cummax_idx_mid" if "cummax" in str(lw.node.target) else "cummin_idx_mid"
    mid, (a, r, b) = ops.around(lw, x, [dim] if x.shape else [])
    values, indices = call_multi(
        lw, kernel, [mid.var], [(a, r, b)] * 2, [x.dtype, "int64"], x.dtype
    )
    return lw.reshape(values, x.shape), lw.reshape(indices, x.shape)


@rule("aten.var_mean.correction")
def _var_mean(lw, x, dims=None, *, correction=None, keepdim=False):
    x = tensor(lw, x)
    mid, (a, _, b) = ops.around(lw, x, ops.dims_arg(dims, len(x.shape)))
    dtype = lw.out_dtype(0)
    var, mean = call_multi(
        lw, "var_mean_mid", [mid.var, _correction(correction)], [(a, b)] * 2, [dtype] * 2, dtype
    )
    return (lw.reshape(var, lw.out_shape(0)), lw.reshape(mean, lw.out_shape(1)))


def _indices_used(lw) -> bool:
    """Whether output 1 (the indices) of the current multi-output node is read."""
    return any(u.args[1] == 1 and (u.users or u.op == "output") for u in lw.node.users)


def _max_min_dim(kind: str):
    def lower(lw, x, dim, keepdim=False):
        x = tensor(lw, x)
        mid, (a, _, b) = ops.around(lw, x, [dim])
        dtype = lw.out_dtype(0)
        if not _indices_used(lw):  # values only: the plain reduction
            values = lw.call(f"a{kind}_mid", [mid.var], (a, b), dtype)
            return (lw.reshape(values, lw.out_shape(0)), _unused(lw, "indices"))
        values, idx = call_multi(
            lw, f"{kind}_dim_mid", [mid.var], [(a, b)] * 2, [dtype, "int64"], dtype
        )
        return (lw.reshape(values, lw.out_shape(0)), lw.reshape(idx, lw.out_shape(1)))

    return lower


RULES["aten.max.dim"] = _max_min_dim("max")
RULES["aten.min.dim"] = _max_min_dim("min")
RULES["aten.max.default"] = ops.reduce("amax_mid")
RULES["aten.min.default"] = ops.reduce("amin_mid")


@rule("aten.linalg_vector_norm.default")
def _vector_norm(lw, x, ord=2, dims=None, keepdim=False, *, dtype=None):
    x = tensor(lw, x)
    mid, (a, _, b) = ops.around(lw, x, ops.dims_arg(dims, len(x.shape)))
    out = lw.out_dtype()
    ord = float(ord)
    if ord == 2:
        y = lw.call("norm2_mid", [mid.var], (a, b), out)
    elif ord == 1:
        y = lw.call("norm1_mid", [mid.var], (a, b), out)
    elif ord == math.inf:
        y = lw.call("norminf_mid", [mid.var], (a, b), out)
    elif ord > 0 and math.isfinite(ord):
        y = lw.call("normp_mid", [mid.var, ord], (a, b), out)
    else:
        lw.fail(f"vector norm of order {ord} is not supported (orders p > 0 and inf are)")
    return lw.reshape(y, lw.out_shape())


# ---------------------------------------------------------------------------- indexing (2)
@rule("aten.gather.default")
def _gather(lw, x, dim, index, sparse_grad=False):
    """torch.gather: out[.., j, ..] = x[.., index[.., j, ..], ..] along `dim`. The element
    index of each output in the flattened x is computed by an integer kernel (gather_rows)
    and fetched with the `gather` builtin (one element per row)."""
    return take_along(lw, tensor(lw, x), dim, tensor(lw, index), lw.out_shape())


def take_along(lw, x, dim, index, shape):
    """x's elements at `index` along dim (torch.gather), reshaped to `shape`."""
    if not x.shape:
        return lw.reshape(x, shape)
    rank = len(x.shape)
    axis = _axis(dim, rank)
    for d in range(rank):  # index may be smaller than x in the other dims: a view of x
        if d != axis and index.shape[d] < x.shape[d]:
            x = ops.slice_view(lw, x, d, 0, index.shape[d])
    a = math.prod(index.shape[:axis])
    b = math.prod(index.shape[axis + 1 :])
    i3 = lw.reshape(index, (a, index.shape[axis], b))
    rows = lw.call("gather_rows", [i3.var, x.shape[axis]], i3.shape, "int64", kernel_dtype="fp32")
    y = ops.gather_rows(lw, lw.flat(x), rows, 0)
    return lw.reshape(y, shape)


@rule("aten.index.Tensor")
def _index(lw, x, indices):
    """Advanced indexing x[i0, i1, ...] with integer index tensors (None: a full slice).
    The indexed dims are merged into one (a view; a copy moves them together first when they
    are not adjacent), an integer kernel turns the (broadcast) indices into row numbers of that
    dim, and `gather` fetches the rows."""
    import torch

    x = tensor(lw, x)
    rank = len(x.shape)
    idx = list(indices) + [None] * (rank - len(indices))
    pos = [i for i, t in enumerate(idx) if t is not None]
    tensors = [tensor(lw, idx[i]) for i in pos]
    if any(t.dtype == "bool" for t in tensors):
        lw.fail("indexing with a boolean mask (a data-dependent shape) is not supported")
    if len(pos) > 3:
        lw.fail("advanced indexing with more than 3 index tensors is not supported yet")
    bshape = tuple(torch.broadcast_shapes(*[t.shape for t in tensors]))
    if pos != list(range(pos[0], pos[-1] + 1)):  # not adjacent: indexed dims first
        order = pos + [d for d in range(rank) if d not in pos]
        x = lw.permute(x, order)
        pos = list(range(len(pos)))
    sizes = [x.shape[d] for d in pos]
    flat = [lw.flat(lw.broadcast_to(t, bshape)) for t in tensors]
    n = math.prod(bshape)
    kernel = {1: "index_wrap1", 2: "index_lin2", 3: "index_lin3"}[len(pos)]
    rows = lw.call(kernel, [f.var for f in flat] + sizes, (n,), "int64", kernel_dtype="fp32")
    pre = math.prod(x.shape[: pos[0]])
    post = math.prod(x.shape[pos[-1] + 1 :])
    table = lw.reshape(x, (pre, math.prod(sizes), post))
    # One index tensor keeps its distinct values through the wrap of negative indices; a
    # gather cannot fetch more distinct rows than it has indices or the table has rows.
    distinct = min(tensors[0].distinct, n, sizes[0]) if len(tensors) == 1 else 0
    y = ops.gather_rows(lw, table, rows, 1, distinct)  # [n, pre, post]
    if pre > 1:
        y = lw.permute(y, (1, 0, 2))
    return lw.reshape(y, lw.out_shape())


@rule("aten.unfold.default")
def _unfold(lw, x, dim, size, step):
    """Sliding windows: the `unfold` view builtin (as in PyTorch, no copy; a kernel reading
    the windows fetches x at most once)."""
    x = tensor(lw, x)
    if not x.shape:
        x = lw.reshape(x, (1,))
    axis = _axis(dim, len(x.shape))
    src = lw.reshape_named(x, "u")
    var = lw.fresh()
    lw.emit(f'{var} = unfold({src.var}, dim="u{axis}", size={int(size)}, step={int(step)})')
    return lw.reshape(Value(var, lw.out_shape(), x.dtype), lw.out_shape())


@rule("aten.repeat.default")
def _repeat(lw, x, repeats):
    """x tiled: a view [1, s0, 1, s1, ...] broadcast to [r0, s0, r1, s1, ...] and merged
    (a kernel reading it fetches x once)."""
    x = tensor(lw, x)
    repeats = [int(r) for r in repeats]
    shape = (1,) * (len(repeats) - len(x.shape)) + tuple(x.shape)
    inter = tuple(v for s in shape for v in (1, s))
    target = tuple(v for r, s in zip(repeats, shape, strict=True) for v in (r, s))
    y = lw.broadcast_to(lw.reshape(x, inter), target)
    return lw.reshape(y, lw.out_shape())


@rule("aten.diagonal.default")
def _diagonal(lw, x, offset=0, dim1=0, dim2=1):
    x = tensor(lw, x)
    rank = len(x.shape)
    d1, d2 = _axis(dim1, rank), _axis(dim2, rank)
    if d1 > d2:
        d1, d2, offset = d2, d1, -offset
    r0, s0 = max(-offset, 0), max(offset, 0)
    n = lw.out_shape()[-1]
    shape5 = (
        math.prod(x.shape[:d1]),
        x.shape[d1],
        math.prod(x.shape[d1 + 1 : d2]),
        x.shape[d2],
        math.prod(x.shape[d2 + 1 :]),
    )
    x5 = lw.reshape(x, shape5)
    out = (shape5[0], shape5[2], shape5[4], n)
    y = lw.call("diagonal_mid", [x5.var, r0, s0, n], out, x.dtype)
    return lw.reshape(y, lw.out_shape())


# ---------------------------------------------------------------------------- copies and scatters
@rule("aten.index_put.default")
def _index_put(lw, x, indices, values, accumulate=False):
    """x[mask] = v (or += v) with one boolean mask over leading dims and one value: a select
    (`where`). x[..., i] = v (or += v, accumulate=True) with one integer index i of one dim
    (x[i], x[:, i], ...): slices of x along that dim overwritten (`scatter`) or added to
    (`scatter_add`: every slice of v, duplicate indices included), i flattened and v
    broadcast to the indexed shape; in place (`inplace=1`) where eager PyTorch writes in
    place (_in_place). Two or three integer index tensors of adjacent dims (x[i, j] = v, a
    MoE's tokens placed in their experts' slots): _index_put_rows. Others (non-adjacent
    dims, more than three, a mask with a tensor of values) are not expressible."""
    x, values = tensor(lw, x), tensor(lw, values)
    idx = [i for i in indices if i is not None]
    axis = len(indices) - 1
    pos = [d for d, i in enumerate(indices) if i is not None]
    if (
        2 <= len(idx) <= 3
        and pos == list(range(pos[0], pos[-1] + 1))
        and all(tensor(lw, i).dtype != "bool" for i in idx)
    ):
        return _index_put_rows(lw, x, pos, [tensor(lw, i) for i in idx], values, accumulate)
    if len(idx) == 1 and indices[axis] is not None and tensor(lw, idx[0]).dtype != "bool":
        index = tensor(lw, idx[0])
        before, after = x.shape[:axis], x.shape[axis + 1 :]
        values = lw.cast(values, x.dtype)
        values = lw.broadcast_to(values, before + tuple(index.shape) + after)
        values = lw.reshape(values, before + (index.numel,) + after)
        shape = (1,) * axis + (index.numel,) + (1,) * len(after)
        index = lw.broadcast_to(lw.reshape(index, shape), values.shape)
        builtin = "scatter_add" if accumulate else "scatter"
        return ops.scatter_into(lw, builtin, x, axis, index, values, _in_place(lw))
    mask = tensor(lw, idx[0]) if len(idx) == 1 and len(indices) == 1 else None
    if mask is None or mask.dtype != "bool" or values.numel != 1:
        lw.fail(
            f"{lw.node.target} with several index tensors or a tensor of values under a mask "
            f"is not expressible in the IR: {_SCATTER}; x[bool_mask] = scalar and "
            "x[..., int_index] = v (or +=) are supported",
            "docs/pytorch-operators.md lists the unsupported operators",
        )
    rank = len(x.shape)
    mask = lw.reshape(mask, tuple(mask.shape) + (1,) * (rank - len(mask.shape)))
    new = elementwise(lw, "add", [x, values]) if accumulate else values
    return elementwise(lw, "where", [mask, new, x])


def _index_put_rows(lw, x, pos, indices, values, accumulate):
    """x[..., i0, i1(, i2), ...] = v (or += v) with integer index tensors of the adjacent dims
    `pos`: those dims merged into one (a view), the broadcast indices turned into rows of it
    by the integer kernel `_index` uses (index_lin2/3, negative indices wrapped), and the rows'
    slices overwritten (`scatter`) or added to (`scatter_add`) along it."""
    import torch

    bshape = tuple(torch.broadcast_shapes(*[t.shape for t in indices]))
    n = math.prod(bshape)
    sizes = [x.shape[d] for d in pos]
    flat = [lw.flat(lw.broadcast_to(t, bshape)) for t in indices]
    kernel = {2: "index_lin2", 3: "index_lin3"}[len(pos)]
    rows = lw.call(kernel, [f.var for f in flat] + sizes, (n,), "int64", kernel_dtype="fp32")
    pre, post = tuple(x.shape[: pos[0]]), tuple(x.shape[pos[-1] + 1 :])
    x3 = lw.reshape(x, (math.prod(pre), math.prod(sizes), math.prod(post)))
    values = lw.broadcast_to(lw.cast(values, x.dtype), pre + bshape + post)
    values = lw.reshape(values, (math.prod(pre), n, math.prod(post)))
    index = lw.broadcast_to(lw.reshape(rows, (1, n, 1)), values.shape)
    builtin = "scatter_add" if accumulate else "scatter"
    y = ops.scatter_into(lw, builtin, x3, 1, index, values, _in_place(lw))
    return lw.reshape(y, x.shape)


@rule("aten.copy.default")
def _copy(lw, dst, src, non_blocking=False):
    """copy_(dst, src) functionalised: src broadcast to dst's shape, in dst's dtype."""
    dst, src = tensor(lw, dst), tensor(lw, src)
    return lw.cast(lw.broadcast_to(src, dst.shape), dst.dtype)


# Views in the ATen graph: an in-place update of one writes into the memory of the tensor it
# views (_in_place follows them to that tensor).
_VIEW_OPS = {
    "aten.slice.Tensor",
    "aten.select.int",
    "aten.view.default",
    "aten._unsafe_view.default",
    "aten.alias.default",
    "aten.unsqueeze.default",
    "aten.squeeze.dim",
    "aten.squeeze.dims",
    "aten.permute.default",
    "aten.transpose.int",
    "aten.t.default",
    "aten.expand.default",
}


def _in_place(lw) -> bool:
    """Whether the scatter being lowered (slice_scatter, select_scatter: torch.export's
    functional form of `x[:, p] = v`) can update its base in place, as eager PyTorch does:
    no operator after it reads the old base or the tensor whose memory it views, and that
    memory is an intermediate or a buffer or input the program updates (docs/pytorch.md,
    "In-place updates")."""
    node = getattr(lw, "node", None)
    order = getattr(lw, "order", None)
    if node is None or order is None or not node.args:
        return False
    at = order[node]
    chain, cur = [], node.args[0]
    while True:
        chain.append(cur)
        if cur.op != "call_function" or str(cur.target) not in _VIEW_OPS:
            break
        cur = cur.args[0]
    if cur.op == "placeholder" and cur.name not in getattr(lw, "mutated", ()):
        return False
    if cur.op not in ("placeholder", "call_function"):
        return False
    return all(order[u] <= at for t in chain for u in t.users if u not in chain)


def _update(lw, base: Value, src: Value, axis: int, start: int, step: int) -> Value:
    """`update`: base with src over elements start, start + step, ... of axis, in place."""
    var = lw.fresh()
    src = lw.cast(src, base.dtype)
    lw.emit(f"{var} = update({base.var}, {src.var}, dim={axis}, start={start}, step={step})")
    return Value(var, tuple(base.shape), base.dtype)


@rule("aten.slice_scatter.default")
def _slice_scatter(lw, base, src, dim=0, start=None, end=None, step=1):
    """base with base[start:end:step] along dim replaced by src: in place (`update`) where
    eager PyTorch assigns in place, else the untouched slices of base and src concatenated."""
    base, src = tensor(lw, base), tensor(lw, src)
    axis = _axis(dim, len(base.shape))
    n = base.shape[axis]
    start = 0 if start is None else start
    end = n if end is None else end
    start = max(0, min(n, start + n if start < 0 else start))
    end = max(start, min(n, end + n if end < 0 else end))
    if tuple(src.shape) == tuple(base.shape):  # the whole of base: src is the result
        return lw.cast(src, base.dtype)
    if _in_place(lw):
        return _update(lw, base, src, axis, start, step)
    if step != 1:
        return strided_slice_scatter(lw, base, src, axis, start, step)
    parts = [
        ops.slice_view(lw, base, axis, 0, start),
        lw.cast(src, base.dtype),
        ops.slice_view(lw, base, axis, end, n),
    ]
    return _concat(lw, parts, axis)


@rule("aten.select_scatter.default")
def _select_scatter(lw, base, src, dim, index):
    base, src = tensor(lw, base), tensor(lw, src)
    axis = _axis(dim, len(base.shape))
    n = base.shape[axis]
    index = index + n if index < 0 else index
    shape = list(base.shape)
    shape[axis] = 1
    if _in_place(lw):
        return _update(lw, base, lw.reshape(src, shape), axis, index, 1)
    parts = [
        ops.slice_view(lw, base, axis, 0, index),
        lw.cast(lw.reshape(src, shape), base.dtype),
        ops.slice_view(lw, base, axis, index + 1, n),
    ]
    return _concat(lw, parts, axis)


# ---------------------------------------------------------------------------- upsampling
def _resize_scales(lw, x: Value, nd: int, scale_factors):
    """(n_in, n_out, scale factor or None) per spatial dim."""
    out = lw.out_shape()
    spatial = x.shape[len(x.shape) - nd :]
    sf = list(scale_factors) if scale_factors else [None] * nd
    return [(spatial[i], out[len(out) - nd + i], sf[i]) for i in range(nd)]


def _f32(v: float) -> float:
    import numpy as np

    return float(np.float32(v))


def _nearest(lw, x, output_size=None, scale_factors=None):
    """Nearest (and nearest-exact) upsampling: integer factors in scatter form (affine);
    other scales gather the source rows of each dim (computed as PyTorch does, in fp32)."""
    x = tensor(lw, x)
    op = str(lw.node.target)
    nd = int(op.split("d.")[0][-1])
    exact = 1 if "exact" in op else 0
    dims = _resize_scales(lw, x, nd, scale_factors)
    out = lw.out_shape()
    factors = [o // i if i and o % i == 0 else 0 for i, o, _ in dims]
    integer = all(
        f > 0 and (s is None or float(s) == f) for f, (_, _, s) in zip(factors, dims, strict=True)
    )
    if integer and nd in (1, 2, 3):
        xf = ops.fold_spatial(lw, x, nd)
        if nd == 1:
            xf = lw.reshape(xf, (xf.shape[0], 1, xf.shape[1]))
            factors = [1, *factors]
        kernel = "upsample_nearest3d_int" if nd == 3 else "upsample_nearest2d_int"
        shape = (xf.shape[0], *(s * f for s, f in zip(xf.shape[1:], factors, strict=True)))
        y = lw.call(kernel, [xf.var, *factors], shape, lw.out_dtype())
        return lw.reshape(y, out)
    cur = x
    rank = len(x.shape)
    for i, (n_in, n_out, s) in enumerate(dims):
        if n_in == n_out and s in (None, 1.0):
            continue
        axis = rank - nd + i
        scale = _f32(1.0 / float(s)) if s else _f32(n_in / n_out)
        var = lw.fresh()
        lw.use_kernel("nearest_index")
        lw.emit(f"{var} = nearest_index({n_in}, {n_out}, {scale!r}, {exact})")
        mid, (a, _, b) = ops.around(lw, cur, [axis])
        y = ops.gather_rows(lw, mid, Value(var, (n_out,), "int64"), 1)  # [P, A, B]
        y = lw.permute(y, (1, 0, 2)) if a > 1 else y
        shape = list(cur.shape)
        shape[axis] = n_out
        cur = lw.reshape(y, shape)
    return lw.reshape(cur, out)


for _nd in (1, 2, 3):
    RULES[f"aten.upsample_nearest{_nd}d.vec"] = _nearest
    RULES[f"aten._upsample_nearest_exact{_nd}d.vec"] = _nearest


def _linear_resize(lw, x, output_size, align_corners, scale_factors=None):
    """(Bi/tri)linear interpolation, one dim at a time: the two source rows of each output row
    are gathered and blended (stdlib/resize.py)."""
    x = tensor(lw, x)
    nd = {"aten.upsample_linear1d.vec": 1, "aten.upsample_bilinear2d.vec": 2}.get(
        str(lw.node.target), 3
    )
    dims = _resize_scales(lw, x, nd, scale_factors)
    cur = x
    rank = len(x.shape)
    for i, (n_in, n_out, s) in enumerate(dims):
        if n_in == n_out:
            continue  # PyTorch copies a dim whose size does not change
        axis = rank - nd + i
        if align_corners:
            scale, off = (_f32((n_in - 1) / (n_out - 1)) if n_out > 1 else 0.0), 0.0
        else:
            scale, off = (_f32(1.0 / float(s)) if s else _f32(n_in / n_out)), 0.5
        i0, i1, lam = call_multi(
            lw,
            "linear_index",
            [n_in, n_out, scale, off],
            [(n_out,)] * 3,
            ["int64", "int64", "fp32"],
        )
        mid, (a, _, b) = ops.around(lw, cur, [axis])
        g0 = ops.gather_rows(lw, mid, i0, 1)
        g1 = ops.gather_rows(lw, mid, i1, 1)
        y = lw.call("lerp_rows", [g0.var, g1.var, lam.var], (a, n_out, b), lw.out_dtype())
        shape = list(cur.shape)
        shape[axis] = n_out
        cur = lw.reshape(y, shape)
    return lw.reshape(cur, lw.out_shape())


RULES["aten.upsample_linear1d.vec"] = _linear_resize
RULES["aten.upsample_bilinear2d.vec"] = _linear_resize
RULES["aten.upsample_trilinear3d.vec"] = _linear_resize


# ---------------------------------------------------------------------------- out of scope
def _not_expressible(reason: str):
    def lower(lw, *args, **kwargs):
        lw.fail(
            f"{lw.node.target} is not expressible in the IR: {reason}",
            "docs/pytorch-operators.md lists the unsupported operators",
        )

    return lower


_SIZE = "the output's size depends on the data; IR shapes are static"
_SCATTER = (
    "a write into data-chosen positions other than an overwrite (`scatter`) or a sum "
    "(`scatter_add`); kernels write only at affine positions"
)
UNSUPPORTED = {
    "aten.nonzero.default": _SIZE,
    "aten.unique.default": _SIZE,
    "aten._unique2.default": _SIZE,
    "aten.masked_select.default": _SIZE,
    "aten._local_scalar_dense.default": (
        "a tensor's value read as a Python number (`.item()`, `.tolist()`, `int(t)`), which "
        "the sizes or control flow after it then depend on; IR shapes are static"
    ),
}
for _op, _why in UNSUPPORTED.items():
    RULES[_op] = _not_expressible(_why)


@rule("aten.empty.memory_format", "aten.empty_permuted.default")
def _empty(lw, *args, **kwargs):
    """An uninitialised tensor (its values are overwritten before use): zeros."""
    return ops.const_typed(lw, 0.0, lw.out_shape(), lw.out_dtype())


# ---------------------------------------------------------------------------- recurrent
# nn.LSTM / nn.GRU / nn.RNN, captured as one custom operator each (frontend/rnn.py).
from .rnn import RULES as _RECURRENT_RULES  # noqa: E402

RULES.update(_RECURRENT_RULES)

# torch.fft's transforms, one `fft` builtin per dim over pair forms (frontend/fft.py).
from .fft import RULES as _FFT_RULES  # noqa: E402

RULES.update(_FFT_RULES)


# The shared op helpers (frontend/ops.py) that are PyTorch operators as they stand.
rule("aten.convolution.default")(ops.convolution)
rule("aten.topk.default")(ops.topk)
rule("aten.any.dim", "aten.any.dims", "aten.any.default")(ops.reduce_any)
rule("aten.flip.default")(ops.flip)
