"""Lowering rules: one function per jaxpr primitive (keyed by its name).

A rule receives the JaxLowerer, the equation and its operands (arrays as `Value`s, rank-0
constants as Python numbers, a broadcast constant as a `Splat`) and returns the result (a
list for a primitive with several). Rules emit the same stdlib kernels as the PyTorch rules
(they call the shared helpers of ../rules.py where the semantics agree), so a program
written in both languages counts the same (docs/jax.md, "Twins"). docs/jax.md lists the
primitives covered; anything else is an error naming the primitive and the source line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import ops
from .. import rules as T  # PyTorch lowerings JAX primitives share as they stand (take_along)
from ..builder import Value, stdlib_kernels
from ..contract import dot_kernel as _dot_kernel
from ..rules import elementwise
from ..values import Transposed

RULES: dict = {}


def rule(*names):
    def register(fn):
        for n in names:
            RULES[n] = fn
        return fn

    return register


@dataclass
class Splat:
    """A constant broadcast to a shape (broadcast_in_dim of a scalar): binary rules use the
    scalar kernels; anything else materialises it (the `constant` builtin)."""

    value: float
    shape: tuple
    dtype: str


class _Empty:
    """The value of an array with no elements (a zero-size dim), which the IR has not."""

    def __repr__(self) -> str:
        return "EMPTY"


EMPTY = _Empty()


def tensor_of(lw, v, shape=None, dtype=None) -> Value:
    """A concrete Value: a folded transpose materialised, a Splat or a Python number as a
    `constant` of `shape` (default: the current result's)."""
    if isinstance(v, Transposed):
        return lw.permute(v.base, v.order)
    if isinstance(v, Value):
        return v
    if isinstance(v, (bool, int, float)):
        shape = lw.out_shape() if shape is None else shape
        v = Splat(float(v), tuple(shape), dtype or lw.out_dtype())
    if isinstance(v, Splat):
        # one element, broadcast as a view: a kernel reads 4 bytes (PyTorch's scalar_tensor)
        return lw.broadcast_to(ops.const_typed(lw, v.value, (), v.dtype), v.shape)
    if v is EMPTY:
        lw.fail("an array with no elements (a zero-size dim) is used here; the IR has none")
    lw.fail(f"expected an array operand, got {type(v).__name__}")


def _scalar(v):
    """The number a scalar operand (a Python number or a Splat) stands for, else None."""
    if isinstance(v, Splat):
        return v.value
    if isinstance(v, (bool, int, float)):
        return v
    return None


def fold(lw, eqn, args):
    """Evaluates an equation whose operands are all known numbers (rank-0 results only):
    a loop counter, a scale computed from sizes. JAX itself computes it."""
    vals = [_host(a, v) for a, v in zip(args, eqn.invars, strict=True)]
    out = eqn.primitive.bind(*vals, **eqn.params)
    outs = out if eqn.primitive.multiple_results else [out]
    return [_python(o) for o in outs]


def _is_key(value) -> bool:
    """Whether `value` is a typed PRNG key array (jax.random.key), which has no NumPy value."""
    import jax

    dtype = getattr(value, "dtype", None)
    return dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key)


def _host(a, var):
    """An operand of a folded equation as NumPy (in its variable's dtype); a PRNG key (a
    program that draws with jax.random inside the function) as it is."""
    aval = getattr(var, "aval", None)
    if _is_key(a) or _is_key(aval):
        return a
    return np.asarray(a, dtype=aval.dtype) if aval is not None else np.asarray(a)


def _python(value):
    """A rank-0 value as a Python number (bool, int, float); other arrays (and PRNG keys)
    as they are."""
    if _is_key(value):
        return value
    arr = np.asarray(value)
    if arr.ndim != 0:
        return arr
    if arr.dtype == np.bool_:
        return bool(arr)
    if np.issubdtype(arr.dtype, np.integer):
        return int(arr)
    return float(arr)


# ---------------------------------------------------------------------------- elementwise
UNARY = {
    "neg": "neg",
    "exp": "exp_",
    "exp2": "exp2_",
    "log": "log_",
    "log1p": "log1p_",
    "expm1": "expm1_",
    "sqrt": "sqrt_",
    "rsqrt": "rsqrt_",
    "tanh": "tanh_",
    "logistic": "sigmoid_",
    "erf": "erf_",
    "sin": "sin_",
    "cos": "cos_",
    "tan": "tan_",
    "sinh": "sinh_",
    "cosh": "cosh_",
    "floor": "floor_",
    "ceil": "ceil_",
    "sign": "sign",
    "abs": "abs_",
    "square": "square",
}


def _unary(kernel):
    def lower_unary(lw, eqn, x):
        return elementwise(lw, kernel, [tensor_of(lw, x)])

    return lower_unary


for _prim, _kernel in UNARY.items():
    RULES[_prim] = _unary(_kernel)


@rule("round")
def _round(lw, eqn, x):
    if int(eqn.params.get("rounding_method", 0)) != 1:
        lw.fail(
            "round away from zero (lax.round's default) is not supported; jnp.round rounds "
            "half to even"
        )
    return elementwise(lw, "round_", [tensor_of(lw, x)])


@rule("not")
def _not(lw, eqn, x):
    if lw.out_dtype() != "bool":
        lw.fail("bitwise not of integers is not supported (logical not of booleans is)")
    return elementwise(lw, "logical_not", [tensor_of(lw, x)], bool_out=True)


@rule("is_finite")
def _is_finite(lw, eqn, x):
    x = tensor_of(lw, x)
    nan = elementwise(lw, "isnan_", [x], bool_out=True)
    inf = elementwise(lw, "isinf_", [x], bool_out=True)
    bad = elementwise(lw, "logical_or", [nan, inf], bool_out=True)
    return elementwise(lw, "logical_not", [bad], bool_out=True)


@rule("integer_pow")
def _integer_pow(lw, eqn, x):
    y = int(eqn.params["y"])
    x = tensor_of(lw, x)
    if y == 1:
        return x
    if y == 2:
        return elementwise(lw, "square", [x])
    if y == -1:
        return elementwise(lw, "reciprocal", [x])
    return elementwise(lw, "pow_scalar", [x], [y])


@rule(
    "stop_gradient",
    "copy",
    "copy_p",
    "optimization_barrier",
    "reduce_precision",
    "device_put",
    "sharding_constraint",
    "mesh_cast",
)
def _identity(lw, eqn, *xs):
    return list(xs)


# Binary primitives: (tensor-tensor kernel, tensor-scalar kernel and the scalar it takes,
# scalar-tensor kernel and its scalar). None: no such form.
def _flt(dtype: str) -> bool:
    return dtype in ("fp32", "fp64", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2")


BINARY = {
    "add": ("add", ("add_scalar", lambda s: s), ("add_scalar", lambda s: s)),
    "sub": ("sub", ("add_scalar", lambda s: -s), ("rsub_scalar", lambda s: s)),
    "mul": ("mul", ("mul_scalar", lambda s: s), ("mul_scalar", lambda s: s)),
    "max": ("maximum", ("maximum_scalar", lambda s: s), ("maximum_scalar", lambda s: s)),
    "min": ("minimum", ("minimum_scalar", lambda s: s), ("minimum_scalar", lambda s: s)),
    "pow": ("pow_tensor", ("pow_scalar", lambda s: s), ("rpow_scalar", lambda s: s)),
    "rem": ("fmod_tensor", ("fmod_scalar", lambda s: s), None),
    "and": ("logical_and", None, None),
    "or": ("logical_or", None, None),
    "xor": ("logical_xor", None, None),
}
COMPARE = {"eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge"}
FLIPPED = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


def _binary(prim):
    tt, ts, st = BINARY[prim]

    def lower_binary(lw, eqn, a, b):
        dtype = lw.out_dtype()
        if prim in ("and", "or", "xor") and dtype != "bool":
            lw.fail(f"bitwise {prim} of integers is not supported (logical {prim} is)")
        sa, sb = _scalar(a), _scalar(b)
        if sa is None and sb is None:
            return elementwise(lw, tt, [tensor_of(lw, a), tensor_of(lw, b)])
        if sb is not None and sa is None:
            if prim == "max" and sb == 0:  # jax.nn.relu
                return elementwise(lw, "relu", [tensor_of(lw, a)])
            if prim == "pow" and sb == 2:
                return elementwise(lw, "square", [tensor_of(lw, a)])
            if prim == "mul" and sb == 1 or prim in ("add", "sub") and sb == 0:
                return tensor_of(lw, a)
            if ts is not None:
                return elementwise(lw, ts[0], [tensor_of(lw, a)], [ts[1](sb)])
        if sa is not None and sb is None:
            if prim == "max" and sa == 0:
                return elementwise(lw, "relu", [tensor_of(lw, b)])
            if prim == "mul" and sa == 1 or prim == "add" and sa == 0:
                return tensor_of(lw, b)
            if st is not None:
                return elementwise(lw, st[0], [tensor_of(lw, b)], [st[1](sa)])
        return elementwise(lw, tt, [tensor_of(lw, a), tensor_of(lw, b)])

    return lower_binary


for _prim in BINARY:
    RULES[_prim] = _binary(_prim)
# jax.grad's sum of the cotangents of a value used more than once: an add.
RULES["add_any"] = RULES["add"]


@rule("div")
def _div(lw, eqn, a, b):
    dtype = lw.out_dtype()
    sa, sb = _scalar(a), _scalar(b)
    if not _flt(dtype):  # lax.div of integers rounds toward zero
        if sb is not None and sa is None:
            return elementwise(lw, "trunc_divide_scalar", [tensor_of(lw, a)], [sb])
        return elementwise(lw, "trunc_divide", [tensor_of(lw, a), tensor_of(lw, b)])
    if sb is not None and sa is None:
        if sb == 1:
            return tensor_of(lw, a)
        return elementwise(lw, "div_scalar", [tensor_of(lw, a)], [sb])
    if sa is not None and sb is None:
        return elementwise(lw, "rdiv_scalar", [tensor_of(lw, b)], [sa])
    return elementwise(lw, "div", [tensor_of(lw, a), tensor_of(lw, b)])


def _compare(prim):
    def lower_compare(lw, eqn, a, b):
        sa, sb = _scalar(a), _scalar(b)
        if sb is not None and sa is None:
            return elementwise(lw, prim + "_scalar", [tensor_of(lw, a)], [sb], bool_out=True)
        if sa is not None and sb is None:
            kernel = FLIPPED[prim] + "_scalar"
            return elementwise(lw, kernel, [tensor_of(lw, b)], [sa], bool_out=True)
        return elementwise(lw, prim, [tensor_of(lw, a), tensor_of(lw, b)], bool_out=True)

    return lower_compare


for _prim in COMPARE:
    RULES[_prim] = _compare(_prim)


@rule("select_n")
def _select_n(lw, eqn, pred, *cases):
    if len(cases) != 2:
        lw.fail(f"select_n with {len(cases)} cases is not supported (two: a where)")
    if isinstance(pred, (bool, int)):
        return tensor_of(lw, cases[int(pred)])
    if lw.ir_dtype(eqn.invars[0].aval.dtype) != "bool":
        lw.fail("select_n with an integer selector is not supported (a boolean one is)")
    shape, dtype = lw.out_shape(), lw.out_dtype()
    a, b = (tensor_of(lw, c, shape, dtype) for c in cases)
    return elementwise(lw, "where", [tensor_of(lw, pred), b, a])


@rule("clamp")
def _clamp(lw, eqn, lo, x, hi):
    slo, shi = _scalar(lo), _scalar(hi)
    if slo is not None and shi is not None:
        return elementwise(lw, "clamp", [tensor_of(lw, x)], [slo, shi])
    shape, dtype = lw.out_shape(), lw.out_dtype()
    lo, hi = tensor_of(lw, lo, shape, dtype), tensor_of(lw, hi, shape, dtype)
    return elementwise(lw, "clamp_tensor", [tensor_of(lw, x), lo, hi])


@rule("convert_element_type")
def _convert(lw, eqn, x):
    dtype = lw.out_dtype()
    if isinstance(x, Splat):
        return Splat(x.value, x.shape, dtype)
    return lw.cast(tensor_of(lw, x), dtype)


@rule("bitcast_convert_type")
def _bitcast(lw, eqn, x):
    """jax.lax.bitcast_convert_type: the bytes read as another dtype (the `bitcast` view).
    Between sizes JAX adds or drops a trailing dim (f32[N] -> u8[N, 4], u8[N, 4] -> f32[N])
    where the builtin scales the last one: a reshape on either side."""
    x = tensor_of(lw, x)
    out = tuple(lw.out_shape())
    if len(out) == len(x.shape) + 1:  # wider to narrower: the new last dim holds the bytes
        if not x.shape:
            x = lw.reshape(x, (1,))
        flat = out[:-2] + (out[-2] * out[-1],) if len(out) >= 2 else out
        return lw.reshape(lw.bitcast(x, lw.out_dtype(), flat), out)
    if len(out) + 1 == len(x.shape):  # narrower to wider: the last dim is grouped away
        return lw.reshape(lw.bitcast(x, lw.out_dtype(), tuple(out) + (1,)), out)
    return lw.bitcast(x, lw.out_dtype(), out)


# ---------------------------------------------------------------------------- shapes
@rule("broadcast_in_dim")
def _broadcast_in_dim(lw, eqn, x, *dyn):
    shape = tuple(int(s) for s in eqn.params["shape"])
    dims = tuple(eqn.params["broadcast_dimensions"])
    if _scalar(x) is not None:
        return Splat(float(_scalar(x)), shape, lw.out_dtype())
    x = tensor_of(lw, x)
    tmp = [1] * len(shape)
    for i, d in enumerate(dims):
        tmp[d] = x.shape[i]
    return lw.broadcast_to(lw.reshape(x, tmp), shape)


@rule("tile")
def _tile(lw, eqn, x):
    """jnp.tile: x viewed as [1, n0, 1, n1, ...], broadcast to [r0, n0, r1, n1, ...] and
    reshaped to [r0 * n0, r1 * n1, ...] (views: a reader reads x; JAX's output is written
    where the program returns it)."""
    reps = tuple(int(r) for r in eqn.params["reps"])
    if isinstance(x, Splat):
        return Splat(x.value, lw.out_shape(), x.dtype)
    x = tensor_of(lw, x)
    if len(reps) != len(x.shape):
        lw.fail(f"tile with {len(reps)} repetitions of a rank-{len(x.shape)} array")
    pairs = [s for n in x.shape for s in (1, n)]
    wide = [s for r, n in zip(reps, x.shape, strict=True) for s in (r, n)]
    return lw.reshape(lw.broadcast_to(lw.reshape(x, pairs), wide), lw.out_shape())


@rule("reshape", "squeeze", "expand_dims")
def _reshape(lw, eqn, x, *dyn):
    if isinstance(x, Splat):
        return Splat(x.value, lw.out_shape(), x.dtype)
    if eqn.primitive.name == "reshape" and eqn.params.get("dimensions"):
        lw.fail("reshape with a dimension order (lax.reshape dimensions=) is not supported")
    return lw.reshape(tensor_of(lw, x), lw.out_shape())


@rule("transpose")
def _transpose(lw, eqn, x):
    x = tensor_of(lw, x)
    order = tuple(int(o) for o in eqn.params["permutation"])
    users = lw.consumers.get(eqn.outvars[0], [])
    if users and all(u is not None and u.primitive.name == "dot_general" for u in users):
        # Read in place by the contraction (the generated kernel indexes it permuted).
        return Transposed(x.var, tuple(x.shape[o] for o in order), x.dtype, base=x, order=order)
    return lw.permute(x, order)


@rule("concatenate")
def _concatenate(lw, eqn, *xs):
    axis = int(eqn.params["dimension"])
    dtype = lw.out_dtype()
    parts = []
    for v, var in zip(xs, eqn.invars, strict=True):
        if 0 in tuple(var.aval.shape):  # an array with no elements adds nothing
            continue
        parts.append(tensor_of(lw, v, tuple(var.aval.shape), dtype))
    return ops.concat(lw, parts, axis)


@rule("split")
def _split(lw, eqn, x):
    sizes = [int(s) for s in eqn.params["sizes"]]
    return list(ops.split(lw, tensor_of(lw, x), sizes, int(eqn.params["axis"])))


@rule("pad")
def _pad(lw, eqn, x, value):
    if _scalar(value) is None:
        lw.fail("pad with a padding value computed from arrays is not supported")
    x = tensor_of(lw, x)
    for axis, (lo, hi, interior) in enumerate(eqn.params["padding_config"]):
        if interior and x.shape[axis] > 1:
            x = _pad_interior(lw, x, axis, int(interior), float(_scalar(value)))
        if lo > 0 or hi > 0:
            var = lw.fresh()
            lw.emit(
                f"{var} = pad({x.var}, dim={axis}, before={max(lo, 0)}, after={max(hi, 0)}, "
                f"value={float(_scalar(value))!r})"
            )
            shape = list(x.shape)
            shape[axis] += max(lo, 0) + max(hi, 0)
            x = Value(var, tuple(shape), x.dtype)
        if lo < 0 or hi < 0:
            n = x.shape[axis]
            x = ops.slice_view(lw, x, axis, max(-lo, 0), n - max(-hi, 0))
    return x


def _pad_interior(lw, x: Value, axis: int, interior: int, value: float) -> Value:
    """`interior` values between neighbours along axis (lax.pad's interior padding, which
    associative_scan emits): x as [.., R, 1, ..], padded after by `interior` along the new
    dim (the `pad` builtin), flattened to [.., R·(1 + interior), ..] and cut before the last
    `interior` (a view). One copy: read x, write the output."""
    n = x.shape[axis]
    inner = lw.reshape(x, x.shape[: axis + 1] + (1,) + x.shape[axis + 1 :])
    var = lw.fresh()
    lw.emit(
        f"{var} = pad({inner.var}, dim={axis + 1}, before=0, after={interior}, value={value!r})"
    )
    spread = inner.shape[: axis + 1] + (1 + interior,) + inner.shape[axis + 2 :]
    flat = lw.reshape(
        Value(var, spread, x.dtype), x.shape[:axis] + (n * (1 + interior),) + x.shape[axis + 1 :]
    )
    return ops.slice_view(lw, flat, axis, 0, n * (1 + interior) - interior)


def _static_slice(lw, x: Value, starts, limits, strides=None) -> Value:
    for axis, (s, e) in enumerate(zip(starts, limits, strict=True)):
        step = int(strides[axis]) if strides else 1
        if s == 0 and e == x.shape[axis] and step == 1:
            continue
        var = lw.fresh()
        lw.emit(f"{var} = slice({x.var}, dim={axis}, start={s}, stop={e}, step={step})")
        shape = list(x.shape)
        shape[axis] = len(range(s, e, step))
        x = Value(var, tuple(shape), x.dtype)
    return x


@rule("slice")
def _slice(lw, eqn, x):
    p = eqn.params
    return _static_slice(lw, tensor_of(lw, x), p["start_indices"], p["limit_indices"], p["strides"])


def _static_starts(lw, starts, shape, sizes, what: str) -> list[int]:
    out = []
    for axis, s in enumerate(starts):
        if not isinstance(s, (int, np.integer)):
            lw.fail(
                f"{what} with a start computed from array values is not supported (a "
                "data-dependent position); a start known when tracing is"
            )
        s = int(s)
        s = s + shape[axis] if s < 0 else s
        out.append(max(0, min(s, shape[axis] - sizes[axis])))  # JAX clamps the start
    return out


@rule("dynamic_slice")
def _dynamic_slice(lw, eqn, x, *starts):
    x = tensor_of(lw, x)
    sizes = [int(s) for s in eqn.params["slice_sizes"]]
    starts = _static_starts(lw, starts, x.shape, sizes, "dynamic_slice")
    return _static_slice(lw, x, starts, [s + n for s, n in zip(starts, sizes, strict=True)])


@rule("dynamic_update_slice")
def _dynamic_update_slice(lw, eqn, x, update, *starts):
    x = tensor_of(lw, x)
    update = tensor_of(lw, update, tuple(eqn.invars[1].aval.shape), x.dtype)
    starts = _static_starts(lw, starts, x.shape, update.shape, "dynamic_update_slice")
    differ = [a for a in range(len(x.shape)) if update.shape[a] != x.shape[a]]
    if len(differ) > 1:
        lw.fail("dynamic_update_slice of a block smaller than the array in two or more dims")
    if not differ:
        return update
    a = differ[0]
    parts = [
        ops.slice_view(lw, x, a, 0, starts[a]),
        update,
        ops.slice_view(lw, x, a, starts[a] + update.shape[a], x.shape[a]),
    ]
    return ops.concat(lw, parts, a)


@rule("iota")
def _iota(lw, eqn):
    shape = tuple(int(s) for s in eqn.params["shape"])
    dim = int(eqn.params["dimension"])
    dtype = lw.out_dtype()
    var = lw.fresh()
    lw.emit(f'{var} = iota("c0", c0={shape[dim]}, dtype="{dtype}")')
    v = Value(var, (shape[dim],), dtype)
    tmp = [1] * len(shape)
    tmp[dim] = shape[dim]
    return lw.broadcast_to(lw.reshape(v, tmp), shape)


@rule("rev")
def _rev(lw, eqn, x):
    return ops.flip(lw, tensor_of(lw, x), list(eqn.params["dimensions"]))


# ---------------------------------------------------------------------------- contractions
def _bias_of(lw, eqn, axis: int):
    """(add equation, bias Value) when the equation's one consumer adds a vector along
    output dim `axis` (a Dense or Conv layer's bias: broadcast or reshaped to [1, .., N, ..]);
    else None. The contraction and its bias are then one kernel, as a GEMM or convolution
    with a bias epilogue (PyTorch's addmm and biased convolution, XLA's fusion)."""
    out = eqn.outvars[0]
    add = lw.sole_consumer(out)
    if add is None or add.primitive.name != "add":
        return None
    other = add.invars[1] if add.invars[0] is out else add.invars[0]
    oshape = tuple(out.aval.shape)
    if other is out or _literal(other) or tuple(add.outvars[0].aval.shape) != oshape:
        return None
    n = int(oshape[axis])
    v = other
    while True:
        shape = tuple(v.aval.shape)
        value = lw.env.get(v)
        along = len(shape) == len(oshape) and shape[axis] == n
        if math.prod(shape) == n and (len(shape) == 1 or along):
            if isinstance(value, Value) and value.dtype == lw.ir_dtype(out.aval.dtype):
                return add, lw.reshape(value, (n,))
        p = lw.producers.get(v)
        if p is None or p.primitive.name not in ("broadcast_in_dim", "reshape"):
            return None
        src = tuple(p.invars[0].aval.shape)
        if math.prod(src) != n:
            return None
        if p.primitive.name == "broadcast_in_dim":
            dims = tuple(p.params["broadcast_dimensions"])
            if not src or dims[[i for i, s in enumerate(src) if s == n][0]] != axis % len(shape):
                return None
        v = p.invars[0]
        if _literal(v):
            return None


def _literal(v) -> bool:
    from jax.extend.core import Literal

    return isinstance(v, Literal)


def _math_mode(lw, eqn) -> None:
    """States fp32 math for the unit when the contraction asks for full fp32 precision
    (precision=HIGHEST, or jax_default_matmul_precision "highest"/"float32"): TF32 is then
    no implementation of it. Other precisions keep the platform default."""
    import jax

    if lw.ir_dtype(eqn.invars[0].aval.dtype) != "fp32":
        return
    precision = eqn.params.get("precision")
    names = [str(p) for p in (precision if isinstance(precision, tuple) else (precision,))]
    default = str(jax.config.jax_default_matmul_precision or "").lower()
    if any("HIGHEST" in n for n in names) or (
        precision is None and default in ("highest", "float32", "fp32")
    ):
        if lw.grouping:
            lw.unit_mode = "fp32"


@rule("dot_general")
def _dot_general(lw, eqn, a, b):
    _math_mode(lw, eqn)
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    a_t = a if isinstance(a, Transposed) else tensor_of(lw, a)
    b_t = b if isinstance(b, Transposed) else tensor_of(lw, b)
    la, lr = len(a_t.shape), len(b_t.shape)
    lhs_names = [""] * la
    rhs_names = [""] * lr
    for i, (x, y) in enumerate(zip(lb, rb, strict=True)):
        lhs_names[x] = rhs_names[y] = f"B{i}"
    for i, (x, y) in enumerate(zip(lc, rc, strict=True)):
        lhs_names[x] = rhs_names[y] = f"K{i}"
    m = [i for i in range(la) if not lhs_names[i]]
    n = [i for i in range(lr) if not rhs_names[i]]
    for j, i in enumerate(m):
        lhs_names[i] = f"M{j}"
    for j, i in enumerate(n):
        rhs_names[i] = f"N{j}"
    out = [f"B{i}" for i in range(len(lb))] + [lhs_names[i] for i in m] + [rhs_names[i] for i in n]
    dtype = lw.out_dtype()
    shape = lw.out_shape()
    if not out:  # a scalar result (a dot of vectors): one output element named M0
        a_t = lw.reshape(tensor_of(lw, a_t), (1, *a_t.shape))
        lhs_names = ["M0", *lhs_names]
        out = ["M0"]
    operands = []
    names = []
    for v, dims in ((a_t, lhs_names), (b_t, rhs_names)):
        if isinstance(v, Transposed):
            # physical axis p holds logical axis l with order[l] == p
            phys = [""] * len(dims)
            for logical, p in enumerate(v.order):
                phys[p] = dims[logical]
            operands.append(v.base)
            names.append(phys)
        else:
            operands.append(v)
            names.append(dims)
    fused = _bias_of(lw, eqn, len(shape) - 1) if out[-1].startswith("N") else None
    bias = out[-1] if fused else ""
    text = _dot_kernel(names[0], names[1], out, dtype, bias)
    kernel = lw.add_kernel(text, "dot")
    args = [operands[0].var, operands[1].var] + ([fused[1].var] if fused else [])
    y = lw.call_kernel(kernel, args, tuple(shape) if shape else (1,), dtype)
    y = lw.reshape(y, shape)
    if fused:
        lw.absorb(fused[0], y)
    return y


@rule("conv_general_dilated")
def _conv(lw, eqn, x, w):
    p = eqn.params
    lhs_spec, rhs_spec, out_spec = p["dimension_numbers"]
    if int(p.get("batch_group_count", 1)) != 1:
        lw.fail("convolution with batch_group_count > 1 is not supported")
    _math_mode(lw, eqn)
    if any(int(d) != 1 for d in p["lhs_dilation"]):
        return _conv_transposed(lw, eqn, x, w)
    x = lw.permute(tensor_of(lw, x), lhs_spec)  # N, C, spatial...
    w = lw.permute(tensor_of(lw, w), rhs_spec)  # O, I, spatial...
    pads = [tuple(int(v) for v in pad) for pad in p["padding"]]
    sym = []
    for axis, (lo, hi) in enumerate(pads):
        if lo != hi or lo < 0:
            x = _pad_axis(lw, x, 2 + axis, lo, hi)
            sym.append(0)
        else:
            sym.append(lo)
    out = lw.out_shape()
    nchw = tuple(out[d] for d in out_spec)
    fused = _bias_of(lw, eqn, out_spec[1])
    with lw.result_as(nchw, eqn.outvars[0].aval.dtype):
        y = ops.convolution(
            lw,
            x,
            w,
            fused[1] if fused else None,
            list(p["window_strides"]),
            sym,
            list(p["rhs_dilation"]),
            False,
            [0] * len(sym),
            int(p["feature_group_count"]),
        )
    inverse = [0] * len(out_spec)
    for i, d in enumerate(out_spec):
        inverse[d] = i
    y = lw.permute(y, inverse)
    if fused:
        lw.absorb(fused[0], y)
    return y


def _pad_axis(lw, x: Value, axis: int, lo: int, hi: int) -> Value:
    if lo > 0 or hi > 0:
        var = lw.fresh()
        lw.emit(f"{var} = pad({x.var}, dim={axis}, before={max(lo, 0)}, after={max(hi, 0)})")
        shape = list(x.shape)
        shape[axis] += max(lo, 0) + max(hi, 0)
        x = Value(var, tuple(shape), x.dtype)
    if lo < 0 or hi < 0:
        x = ops.slice_view(lw, x, axis, max(-lo, 0), x.shape[axis] - max(-hi, 0))
    return x


def _conv_transposed(lw, eqn, x, w):
    """A convolution with input dilation d (jax.lax.conv_transpose, Flax ConvTranspose): a
    transposed convolution of stride d, counted over the real inputs only (the dilated
    zeros are never multiplied). Padding (lo, hi) of the dilated input with a k-tap kernel
    of dilation r is PyTorch's padding r(k-1) - lo, with output_padding hi - lo."""
    p = eqn.params
    lhs_spec, rhs_spec, out_spec = p["dimension_numbers"]
    g = int(p["feature_group_count"])
    if g != 1 or any(int(s) != 1 for s in p["window_strides"]):
        lw.fail("a convolution with input dilation and strides or groups is not supported")
    x = lw.permute(tensor_of(lw, x), lhs_spec)
    w = lw.permute(tensor_of(lw, w), rhs_spec)  # O, I, spatial
    ks = w.shape[2:]
    rdil = [int(r) for r in p["rhs_dilation"]]
    # Padding (lo, hi) with hi < lo (Flax's SAME for an odd kernel) has no PyTorch form; the
    # same correlation on spatially reversed input and kernel takes (hi, lo) and gives the
    # reversed output (flips inside the unit: no traffic, no FLOPs).
    padding = [(int(lo), int(hi)) for lo, hi in p["padding"]]
    flips = [2 + i for i, (lo, hi) in enumerate(padding) if hi < lo]
    if flips:
        x, w = ops.flip(lw, x, flips), ops.flip(lw, w, flips)
        padding = [(hi, lo) if hi < lo else (lo, hi) for lo, hi in padding]
    pads, outpad = [], []
    for (lo, hi), k, r in zip(padding, ks, rdil, strict=True):
        tp = r * (k - 1) - int(lo)
        op = int(hi) - int(lo)
        if tp < 0 or op < 0 or op >= max(int(d) for d in p["lhs_dilation"]):
            lw.fail("this padding of a convolution with input dilation is not supported")
        pads.append(tp)
        outpad.append(op)
    # PyTorch's transposed weight [C_in, O, k...], spatially flipped against lax's.
    w_t = lw.permute(w, [1, 0, *range(2, len(w.shape))])
    w_t = ops.flip(lw, w_t, list(range(2, len(w.shape))))
    out = lw.out_shape()
    nchw = tuple(out[d] for d in out_spec)
    with lw.result_as(nchw, eqn.outvars[0].aval.dtype):
        y = ops.convolution(lw, x, w_t, None, list(p["lhs_dilation"]), pads, rdil, True, outpad, 1)
    if flips:
        y = ops.flip(lw, y, flips)
    inverse = [0] * len(out_spec)
    for i, d in enumerate(out_spec):
        inverse[d] = i
    return lw.permute(y, inverse)


# ---------------------------------------------------------------------------- reductions
def _reduce(kernel: str):
    def lower_reduce(lw, eqn, x):
        axes = [int(a) for a in eqn.params["axes"]]
        x = tensor_of(lw, x, tuple(eqn.invars[0].aval.shape), lw.ir_dtype(eqn.invars[0].aval.dtype))
        if not axes:
            return x
        return ops.reduce(kernel)(lw, x, axes)

    return lower_reduce


RULES["reduce_sum"] = _reduce("sum_mid")
RULES["reduce_max"] = _reduce("amax_mid")
RULES["reduce_min"] = _reduce("amin_mid")
RULES["reduce_prod"] = _reduce("prod_mid")


@rule("reduce_or")
def _reduce_or(lw, eqn, x):
    return ops.reduce_any(lw, tensor_of(lw, x), [int(a) for a in eqn.params["axes"]])


@rule("reduce_and")
def _reduce_and(lw, eqn, x):
    x = tensor_of(lw, x)
    mid, (a, _, b) = ops.around(lw, x, [int(d) for d in eqn.params["axes"]])
    y = lw.call("all_mid", [mid.var], (a, b), "bool", kernel_dtype="fp32")
    return lw.reshape(y, lw.out_shape())


def _arg(kernel: str):
    def lower_arg(lw, eqn, x):
        (axis,) = [int(a) for a in eqn.params["axes"]]
        x = tensor_of(lw, x)
        dtype = lw.out_dtype()
        mid, (a, _, b) = ops.around(lw, x, [axis])
        text = stdlib_kernels()[kernel].replace('dtype="int64"', f'dtype="{dtype}"')
        name = lw.add_kernel(text.replace(f"def {kernel}(", "def {name}(", 1), kernel)
        y = lw.call_kernel(name, [mid.var], (a, b), dtype)
        return lw.reshape(y, lw.out_shape())

    return lower_arg


RULES["argmax"] = _arg("argmax_mid")
RULES["argmin"] = _arg("argmin_mid")


def _cumulative(kernel: str):
    def lower_cumulative(lw, eqn, x):
        axis = int(eqn.params["axis"])
        x = tensor_of(lw, x)
        if eqn.params.get("reverse"):
            x = ops.flip(lw, x, [axis])
        y = ops.along(kernel)(lw, x, axis)
        if eqn.params.get("reverse"):
            y = ops.flip(lw, y, [axis])
        return y

    return lower_cumulative


RULES["cumsum"] = _cumulative("cumsum_mid")
RULES["cumprod"] = _cumulative("cumprod_mid")
RULES["cummax"] = _cumulative("cummax_mid")
RULES["cummin"] = _cumulative("cummin_mid")


# ---------------------------------------------------------------------------- pooling
def _window(lw, eqn, x, kind: str):
    """reduce_window_{max,sum} over trailing-spatial windows (Flax max_pool / avg_pool,
    lax.reduce_window): dims with a window of 1 and stride 1 fold into the batch; the
    windowed dims (2 or 3) are the pool's spatial dims."""
    p = eqn.params
    win = [int(v) for v in p["window_dimensions"]]
    strides = [int(v) for v in p["window_strides"]]
    pads = [tuple(int(v) for v in pad) for pad in p["padding"]]
    if any(int(d) != 1 for d in p.get("base_dilation", ())):
        lw.fail("reduce_window with base dilation is not supported")
    dil = [int(v) for v in p.get("window_dilation", (1,) * len(win))]
    x = tensor_of(lw, x)
    spatial = [i for i, k in enumerate(win) if k != 1 or strides[i] != 1 or pads[i] != (0, 0)]
    if not spatial:
        return x
    if len(spatial) == 1:
        spatial = [spatial[0] - 1, spatial[0]] if spatial[0] > 0 else [0, 1]
    if len(spatial) > 3:
        lw.fail("reduce_window over more than three dims is not supported")
    nd = len(spatial)
    keep = [i for i in range(len(win)) if i not in spatial]
    xp = lw.permute(x, keep + spatial)
    out = lw.out_shape()
    out_perm = tuple(out[i] for i in keep + spatial)
    xf = ops.fold_spatial(lw, xp, nd)
    oshape = (xf.shape[0], *out_perm[-nd:])
    k = [win[i] for i in spatial]
    s = [strides[i] for i in spatial]
    lo = [pads[i][0] for i in spatial]
    d = [dil[i] for i in spatial]
    dtype = lw.out_dtype()
    divisor = None
    if kind == "max":
        if any(v < 0 for v in lo):
            lw.fail("negative padding of a window is not supported")
        y = lw.call(f"max_pool{nd}d", [xf.var, *k, *s, *lo, *d, *out_perm[-nd:]], oshape, dtype)
    else:
        if any(v != 1 for v in d):
            lw.fail("a window sum with window dilation is not supported")
        divisor = _divisor(lw, eqn, math.prod(k))
        if divisor is not None:
            # sum / prod(window) (Flax avg_pool): the mean over the whole window, padding
            # included: one pooling kernel, as PyTorch's avg_pool with count_include_pad
            bounds = []
            for size, a, i in zip(xf.shape[1:], lo, spatial, strict=True):
                bounds += [-a, size + pads[i][1]]
            args = [xf.var, *k, *s, *lo, *out_perm[-nd:], *bounds]
            y = lw.call(f"avg_pool{nd}d", args, oshape, dtype)
        elif nd == 2:
            args = [xf.var, *k, *s, *lo, *out_perm[-nd:], 1.0]
            y = lw.call("avg_pool2d_div", args, oshape, dtype)
        else:
            lw.fail("a 3-D window sum that is no average is not supported")
    y = lw.reshape(y, out_perm)
    inverse = [0] * len(win)
    for i, dim in enumerate(keep + spatial):
        inverse[dim] = i
    y = lw.permute(y, inverse)
    if kind == "sum" and divisor is not None:
        lw.absorb(divisor, y)
    return y


def _divisor(lw, eqn, count: int):
    """The equation that divides this window sum by its window size (Flax avg_pool), if
    that is its one consumer."""
    div = lw.sole_consumer(eqn.outvars[0])
    if div is None or div.primitive.name != "div" or div.invars[0] is not eqn.outvars[0]:
        return None
    d = div.invars[1]
    value = float(d.val) if _literal(d) else lw.env.get(d)
    if isinstance(value, Splat):
        value = value.value
    return div if isinstance(value, (int, float)) and float(value) == float(count) else None


@rule("select_and_scatter_add")
def _select_and_scatter_add(lw, eqn, source, operand):
    """The gradient of a max pool (reduce_window_max under jax.grad) whose windows do not
    overlap (stride = window, no padding): each window's gradient goes to its first
    maximum. The windows' elements brought together ([windows, window size]; a copy),
    `argmax_mid` (first occurrence, as XLA's `ge` selection), then `scatter_to_index_mid`
    and the inverse copy. Overlapping or padded windows are not supported."""
    p = eqn.params
    win = [int(v) for v in p["window_dimensions"]]
    strides = [int(v) for v in p["window_strides"]]
    pads = [tuple(int(v) for v in pad) for pad in p["padding"]]
    x, g = tensor_of(lw, operand), tensor_of(lw, source)
    if getattr(p["select_prim"], "name", "") != "ge":
        lw.fail("select_and_scatter_add other than a max pool's gradient is not supported")
    if (
        strides != win
        or any(pad != (0, 0) for pad in pads)
        or any(n % k for n, k in zip(x.shape, win, strict=True))
    ):
        lw.fail(
            "the gradient of a max pool with overlapping or padded windows is not supported "
            "(windows that tile the input are)"
        )
    split, outer, inner = [], [], []
    for n, k in zip(x.shape, win, strict=True):
        if k > 1:
            outer.append(len(split))
            inner.append(len(split) + 1)
            split += [n // k, k]
        else:
            outer.append(len(split))
            split.append(n)
    order = outer + inner
    windows = lw.permute(lw.reshape(x, tuple(split)), order)
    a, r = math.prod(split[i] for i in outer), math.prod(split[i] for i in inner)
    idx = lw.call("argmax_mid", [lw.reshape(windows, (a, r, 1)).var], (a, 1), "int64", "fp32")
    y = lw.call("scatter_to_index_mid", [lw.reshape(g, (a, 1)).var, idx.var, r], (a, r, 1), g.dtype)
    y = lw.reshape(y, windows.shape)
    inverse = [order.index(i) for i in range(len(order))]
    return lw.reshape(lw.permute(y, inverse), x.shape)


@rule("reduce_window_max")
def _reduce_window_max(lw, eqn, x):
    return _window(lw, eqn, x, "max")


@rule("reduce_window_sum")
def _reduce_window_sum(lw, eqn, x):
    return _window(lw, eqn, x, "sum")


# ---------------------------------------------------------------------------- indexing
@rule("gather")
def _gather(lw, eqn, table, index):
    """Two patterns: rows of one axis (an embedding lookup, jnp.take, x[idx]) and one
    element per position along an axis (jnp.take_along_axis)."""
    dn = eqn.params["dimension_numbers"]
    sizes = [int(s) for s in eqn.params["slice_sizes"]]
    table, index = tensor_of(lw, table), tensor_of(lw, index)
    collapsed = tuple(dn.collapsed_slice_dims)
    start_map = tuple(dn.start_index_map)
    batching = tuple(getattr(dn, "operand_batching_dims", ()))
    out = lw.out_shape()
    if len(collapsed) != 1 or start_map != collapsed or index.shape[-1:] != (1,):
        lw.fail("this gather pattern is not supported (a lookup along one axis is)")
    axis = collapsed[0]
    idx = lw.reshape(index, index.shape[:-1])
    if not batching:
        if any(sizes[i] != table.shape[i] for i in range(len(sizes)) if i != axis):
            lw.fail("a gather of partial slices is not supported (whole rows are)")
        y = ops.gather_rows(lw, table, idx, axis)
        # gather's result: index dims, then the table's other dims; lax puts the offset
        # dims at offset_dims
        offset = list(dn.offset_dims)
        nb = len(idx.shape)
        order = [0] * len(out)
        o_it, b_it = iter(range(nb, len(out))), iter(range(nb))
        for pos in range(len(out)):
            order[pos] = next(o_it) if pos in offset else next(b_it)
        return lw.reshape(lw.permute(y, order), out)
    # take_along_axis: batching dims are every other axis, one element each
    if sorted(batching + collapsed) != list(range(len(table.shape))) or any(s != 1 for s in sizes):
        lw.fail("this batched gather pattern is not supported (take_along_axis is)")
    return T.take_along(lw, table, axis, idx, out)


@rule("scatter", "scatter-add")
def _scatter(lw, eqn, x, index, updates):
    """Whole rows of one axis overwritten or added to: x.at[idx].set(v) / .add(v),
    jax.ops.segment_sum. The `scatter` / `scatter_add` builtins along that axis, with the
    updates' scatter dims flattened and put at the axis and the index broadcast to them (a
    view: read once). Indices out of range are a bounds error when the IR program runs
    (lax's default mode drops those updates)."""
    dn = eqn.params["dimension_numbers"]
    x, index, updates = tensor_of(lw, x), tensor_of(lw, index), tensor_of(lw, updates)
    inserted = tuple(dn.inserted_window_dims)
    window = tuple(dn.update_window_dims)
    if (
        len(inserted) != 1
        or tuple(dn.scatter_dims_to_operand_dims) != inserted
        or index.shape[-1:] != (1,)
        or tuple(getattr(dn, "operand_batching_dims", ()))
    ):
        lw.fail("this scatter pattern is not supported (whole rows of one axis, x.at[i], are)")
    axis = inserted[0]
    rest = tuple(d for i, d in enumerate(x.shape) if i != axis)
    scatter_dims = [d for d in range(len(updates.shape)) if d not in window]
    if tuple(updates.shape[d] for d in window) != rest:
        lw.fail("a scatter of partial rows is not supported (whole rows are)")
    rows = math.prod(updates.shape[d] for d in scatter_dims)
    # updates -> [rows, rest...] -> rest[:axis] + [rows] + rest[axis:]
    src = lw.reshape(lw.permute(updates, scatter_dims + list(window)), (rows,) + rest)
    order = list(range(1, axis + 1)) + [0] + list(range(axis + 1, len(rest) + 1))
    src = lw.permute(src, order)
    idx = lw.reshape(index, (1,) * axis + (rows,) + (1,) * (len(rest) - axis))
    idx = lw.broadcast_to(idx, src.shape)
    builtin = "scatter_add" if eqn.primitive.name == "scatter-add" else "scatter"
    return ops.scatter_into(lw, builtin, x, axis, idx, src)


@rule("top_k")
def _top_k(lw, eqn, x):
    k = int(eqn.params["k"])
    values, indices = ops.topk(lw, tensor_of(lw, x), k, -1)
    return [values, lw.cast(indices, lw.out_dtype(1))]


# ---------------------------------------------------------------------------- control flow
@rule("scan")
def _scan(lw, eqn, *args):
    """A scan with its static trip count, unrolled: each iteration's equations lowered on
    the carries and the step's slices of xs; ys stacked along a new leading dim."""
    p = eqn.params
    n, nconst, ncarry = int(p["length"]), int(p["num_consts"]), int(p["num_carry"])
    consts, carry, xs = (
        list(args[:nconst]),
        list(args[nconst : nconst + ncarry]),
        args[nconst + ncarry :],
    )
    body = p["jaxpr"]
    steps = range(n - 1, -1, -1) if p.get("reverse") else range(n)
    ys: list[list] = []
    for i in steps:
        sliced = []
        for x in xs:
            x = tensor_of(lw, x) if not isinstance(x, Splat) else x
            if isinstance(x, Splat):
                sliced.append(Splat(x.value, x.shape[1:], x.dtype))
                continue
            var = lw.fresh()
            lw.emit(f"{var} = select({x.var}, dim=0, index={i})")
            sliced.append(Value(var, x.shape[1:], x.dtype))
        outs = lw.inline(body, consts + carry + sliced, group=lw.grouping)
        carry = outs[:ncarry]
        ys.append(outs[ncarry:])
    if p.get("reverse"):
        ys.reverse()
    stacked = []
    for j, var in enumerate(eqn.outvars[ncarry:]):
        parts = [
            tensor_of(lw, step[j], tuple(var.aval.shape[1:]), lw.out_dtype(ncarry + j))
            for step in ys
        ]
        if not parts:
            lw.fail("a scan of length 0 is not supported")
        v = lw.fresh()
        lw.emit(f'{v} = stack([{", ".join(x.var for x in parts)}], dim="steps")')
        stacked.append(Value(v, (n, *parts[0].shape), parts[0].dtype))
    return carry + stacked


@rule("cond")
def _cond(lw, eqn, index, *args):
    if not isinstance(index, (bool, int, np.integer)):
        lw.fail(
            "lax.cond on a value computed from arrays is not supported (a data-dependent "
            "branch); a predicate known when tracing is"
        )
    branches = eqn.params["branches"]
    i = max(0, min(int(index), len(branches) - 1))
    return lw.inline(branches[i], list(args))


@rule("while")
def _while(lw, eqn, *args):
    lw.fail(
        "lax.while_loop has a trip count known only when it runs; use lax.fori_loop with "
        "static bounds or lax.scan (a static trip count)"
    )


@rule("sort")
def _sort(lw, eqn, *operands):
    """jnp.sort, argsort, lax.sort_key_val: one key sorted ascending along `dimension` with the
    `topk` builtin (k = the dim's size; stable, NaN last as in lax.sort); each further operand
    (argsort's iota, sort_key_val's values) is taken along the same permutation (the `gather`
    of torch.gather). Several keys are not supported."""
    if int(eqn.params["num_keys"]) != 1:
        lw.fail("a sort on several keys (lax.sort with num_keys > 1) is not supported")
    key = tensor_of(lw, operands[0])
    axis = int(eqn.params["dimension"]) % max(len(key.shape), 1)
    values, indices = ops.topk(lw, key, key.shape[axis], axis, False)
    outs = [values]
    for payload in operands[1:]:
        outs.append(T.take_along(lw, tensor_of(lw, payload), axis, indices, key.shape))
    return outs


# ---------------------------------------------------------------------------- library calls
# Equation sequences of one user-level call that are one PyTorch operator and one stdlib
# kernel (as JAX 0.4-0.10 emits them): jax.nn.softmax and log_softmax along one axis, and
# jax.nn.gelu (exact and tanh). The kernel computes the same function; the counts follow the
# kernel, as for PyTorch's operator. kernel -> (primitives, "along" an axis | "elementwise").
PATTERNS = {
    "softmax_mid": (
        ["reduce_max", "max", "broadcast_in_dim", "stop_gradient", "sub", "exp"]
        + ["reduce_sum", "broadcast_in_dim", "div"],
        "along",
    ),
    "log_softmax_mid": (
        ["reduce_max", "max", "broadcast_in_dim", "stop_gradient", "sub", "exp"]
        + ["reduce_sum", "broadcast_in_dim", "log", "sub"],
        "along",
    ),
    "gelu_tanh": (["integer_pow", "mul", "add", "mul", "tanh", "add", "mul", "mul"], "elementwise"),
    "gelu": (["mul", "neg", "mul", "erfc", "mul", "copy"], "elementwise"),
}
PATTERN_LABELS = {
    "softmax_mid": "jax.nn.softmax",
    "log_softmax_mid": "jax.nn.log_softmax",
    "gelu_tanh": "jax.nn.gelu",
    "gelu": "jax.nn.gelu",
}


def lower_pattern(lw, eqns) -> str:
    """Lowers a run of equations of one user-level call as one stdlib kernel when it is a
    known library function (PATTERNS; the run, or the body of the one nested call it is),
    and returns the unit's label; "" otherwise (nothing emitted)."""
    body = eqns
    if len(eqns) == 1 and eqns[0].primitive.name in ("jit", "pjit"):
        body = list(eqns[0].params["jaxpr"].jaxpr.eqns)
    names = [e.primitive.name for e in body]
    kernel = next((k for k, (p, _) in PATTERNS.items() if p == names), None)
    if kernel is None:
        return ""
    kind = PATTERNS[kernel][1]
    source = next((v for v in body[0].invars if not _literal(v)), None)
    made = {source}
    for e in body:  # a closed computation of one input
        if any(not _literal(v) and v not in made for v in e.invars):
            return ""
        made |= set(e.outvars)
    if kind == "along":
        axes = tuple(body[0].params["axes"])
        if len(axes) != 1 or tuple(body[6].params["axes"]) != axes:
            return ""
    nested = body is not eqns
    if not nested:
        inner = {v for e in body for v in e.outvars} - {body[-1].outvars[0]}
        if any(u is None or u not in eqns for v in inner for u in lw.consumers.get(v, [])):
            return ""  # an intermediate is read outside the call
    outer = eqns[0] if nested else body[-1]
    x = lw.env.get(eqns[0].invars[body[0].invars.index(source)] if nested else source)
    if not isinstance(x, Value):
        return ""
    lw.node = outer
    if kind == "along":
        y = ops.along(kernel)(lw, x, axes[0])
    else:
        y = elementwise(lw, kernel, [x])
    lw.env[outer.outvars[0]] = y
    for e in eqns:
        lw.done.add(id(e))
    label = PATTERN_LABELS[kernel]
    lw.ops[label] = lw.ops.get(label, 0) + 1
    lw.sequence.append(label)
    return label


@rule("erfc")
def _erfc(lw, eqn, x):
    y = elementwise(lw, "erf_", [tensor_of(lw, x)])
    return elementwise(lw, "rsub_scalar", [y], [1.0])
