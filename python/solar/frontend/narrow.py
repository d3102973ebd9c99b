"""Narrow math inside a program: a matrix product of dequantised narrow codes.

A quantised reference (SOL-ExecBench's Quant problems) quantises to fp8 inside the program and
multiplies the dequantised values: `a = codes_a.to(float32) * scale_a` (a scale per tensor,
per row, or per block of 1x128 / 128x128 elements), then `a @ b.T`. The products are fp32 by
dtype, but what they multiply is a narrow code times a scale. Where the scale is constant over
blocks of the contracted dim K, it factors out of each block's partial sum:

    sum_k a[m,k] b[n,k] = sum_kb sa[m,kb] sb[n,kb] * sum_{k in kb} codes_a[m,k] codes_b[n,k]

so a block-scaled narrow GEMM (DeepGEMM's FP8 GEMM on Hopper, tcgen05's block-scaled MMA on
Blackwell) computes the product at the narrow format's matrix rate and rescales each block's
partial sums on the vector units. This module recognises that pattern on the captured FX
graph (the mm's operands, back through views, to `mul(cast(codes), scale)`) and emits one
kernel that reads the codes (the fp32 casts of the fp8 tensors, which the core's value tracking
knows hold fp8 values: src/sol/value_dtypes.cpp) and the scales: its contraction is priced at
the fp8 rate, its rescale is `blocks x outputs` vector work (docs/sol-modes.md, "Narrow math
inside a program").

Why the front end and not the core's value tracking: which elements a scale multiplies is a
question of shapes through reshapes and broadcasts (a (M/128, 1, K/128, 1) scale broadcast over
(M/128, 128, K/128, 128) and viewed as (M, K)), which the FX graph states directly; the core
sees a multiply of two tensors and views without the block structure. Emitting the block-scaled
kernel also lets validation run it against PyTorch: it computes the same sums.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .builder import Value
from .values import Transposed, tensor

# The narrow code dtypes (torch's names) a scale may multiply, and the smallest K-block over
# which the scale must be constant for a narrow MMA to run between rescales: the K of one
# MMA instruction for 8-bit operands (Hopper wgmma m64nNk32 for e4m3/e5m2, PTX ISA
# "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"; Blackwell tcgen05.mma
# kind::mxf8f6f4 takes one scale per 32 elements of K, the OCP Microscaling (MX) v1.0 block
# size 32). A coarser block (DeepGEMM's 128: its software promotion every four k32 wgmmas)
# is also fine; a finer one (per element) leaves nothing to run in fp8.
MIN_BLOCK = {"torch.float8_e4m3fn": 32, "torch.float8_e5m2": 32}

# FX ops that only re-view their input's elements in row-major order.
_RESHAPES = {
    "aten.view.default",
    "aten._unsafe_view.default",
    "aten.reshape.default",
    "aten.unsqueeze.default",
    "aten.squeeze.dim",
    "aten.squeeze.dims",
    "aten.squeeze.default",
    "aten.alias.default",
    "aten.clone.default",
}
_TRANSPOSES = {"aten.t.default", "aten.permute.default", "aten.transpose.int"}


@dataclass
class NarrowOperand:
    """One operand of a product, [R, K] row-major, as codes times a block-constant scale.

    `codes`: the lowered fp32 (or bf16) cast of the narrow codes, shaped like the mul.
    `groups`: the R part as (size, scale varies along it) runs, size-1 dims dropped.
    `kb`, `bk`: K = kb * bk, the scale constant over each block of bk (kb == 1: along all K).
    `scale`: the lowered scale and its shape padded to the mul's rank.
    """

    codes: Value
    code_dtype: str
    groups: list
    kb: int
    bk: int
    scale: Value
    scale_shape: tuple
    out_shape: tuple


def _target(node) -> str:
    return str(getattr(node, "target", ""))


def _shape(node) -> tuple | None:
    val = getattr(node, "meta", {}).get("val")
    if val is None or not hasattr(val, "shape"):
        return None
    return tuple(int(s) for s in val.shape)


def _codes_cast(node):
    """The `_to_copy` of narrow codes that `node` views (through reshapes), or None."""
    while getattr(node, "op", "") == "call_function" and _target(node) in _RESHAPES:
        node = node.args[0]
    if getattr(node, "op", "") != "call_function" or _target(node) != "aten._to_copy.default":
        return None
    src = node.args[0]
    val = getattr(src, "meta", {}).get("val")
    if val is None or str(val.dtype) not in MIN_BLOCK:
        return None
    return node


def _kinds(out: tuple, scale: tuple):
    """Per dim of the mul's result: None (size 1), True (the scale varies along it) or False
    (broadcast: constant); None overall when the scale is not broadcastable this way."""
    if len(scale) > len(out):
        return None
    scale = (1,) * (len(out) - len(scale)) + tuple(scale)
    kinds = []
    for o, s in zip(out, scale, strict=True):
        if o == 1:
            kinds.append(None)
        elif s == o:
            kinds.append(True)
        elif s == 1:
            kinds.append(False)
        else:
            return None
    return kinds, scale


def narrow_operand(lw, fx_arg, transposed: bool, rows: int, k: int) -> NarrowOperand | None:
    """`fx_arg` (an mm operand, [rows, k] once a folded transpose is undone) as narrow codes
    times a scale constant over K-blocks of at least MIN_BLOCK, or None."""
    node = fx_arg
    if transposed:
        if _target(node) not in _TRANSPOSES:
            return None
        node = node.args[0]
    while getattr(node, "op", "") == "call_function" and _target(node) in _RESHAPES:
        node = node.args[0]
    if getattr(node, "op", "") != "call_function" or _target(node) != "aten.mul.Tensor":
        return None
    out = _shape(node)
    if out is None or math.prod(out) != rows * k:
        return None
    for codes_side, scale_side in ((0, 1), (1, 0)):
        cast = _codes_cast(node.args[codes_side])
        scale = node.args[scale_side]
        if cast is None or _shape(node.args[codes_side]) != out or _shape(scale) is None:
            continue
        if _codes_cast(scale) is not None:
            return None  # codes times codes: no scale
        found = _split(out, _shape(scale), rows, k)
        if found is None:
            return None
        groups, kb, bk = found
        code_dtype = str(cast.args[0].meta["val"].dtype)
        if kb > 1 and bk < MIN_BLOCK[code_dtype]:
            return None
        values = getattr(lw, "values", {})
        codes = values.get(node.args[codes_side].name)
        scale_value = values.get(scale.name)
        if codes is None or scale_value is None or not codes.var or not scale_value.var:
            return None
        padded = (1,) * (len(out) - len(_shape(scale))) + _shape(scale)
        return NarrowOperand(codes, code_dtype, groups, kb, bk, scale_value, padded, out)
    return None


def _split(out: tuple, scale: tuple, rows: int, k: int):
    """(R groups, kb, bk) of a mul result `out` viewed row-major as [rows, k] with a scale of
    shape `scale`, or None where K's scale is not constant over trailing blocks."""
    found = _kinds(out, scale)
    if found is None:
        return None
    kinds, _ = found
    j, prod = 0, 1
    while j < len(out) and prod < rows:
        prod *= out[j]
        j += 1
    if prod != rows or math.prod(out[j:]) != k:
        return None
    groups: list = []
    for size, kind in zip(out[:j], kinds[:j], strict=True):
        if kind is None:
            continue
        if groups and groups[-1][1] == kind:
            groups[-1] = (groups[-1][0] * size, kind)
        else:
            groups.append((size, kind))
    kb, bk, seen_const = 1, 1, False
    for size, kind in zip(out[j:], kinds[j:], strict=True):
        if kind is None:
            continue
        if kind:
            if seen_const:
                return None  # varies inside a block: no trailing block structure
            kb *= size
        else:
            seen_const = True
            bk *= size
    return groups, kb, bk


def _scale_view(lw, op: NarrowOperand, kb: int) -> Value:
    """The scale as [its varying R groups..., kb], broadcast (a view) along K where it is
    constant there."""
    varying = [size for size, vary in op.groups if vary]
    s = lw.reshape(op.scale, (*varying, op.kb))
    return lw.broadcast_to(s, (*varying, kb))


def _kernel_text(a_vary: list, b_vary: list, dtype: str) -> str:
    """The block-scaled GEMM over A [a groups..., KB, KI] and B [b groups..., KB, KI] with
    scales SA [A's varying groups..., KB] and SB [B's..., KB] (`a_vary`, `b_vary`: per group,
    whether its scale varies along it)."""
    a = [f"a{i}" for i in range(len(a_vary))]
    b = [f"b{i}" for i in range(len(b_vary))]
    av = [d for d, v in zip(a, a_vary, strict=True) if v]
    bv = [d for d, v in zip(b, b_vary, strict=True) if v]
    out = a + b
    size = {d: f"A.shape[{i}]" for i, d in enumerate(a)} | {
        d: f"B.shape[{i}]" for i, d in enumerate(b)
    }
    size["KB"] = f"A.shape[{len(a)}]"

    def new(name: str, dims: list, dt: str) -> str:
        sizes = ", ".join(f"{d}={size[d]}" for d in dims)
        return f'    {name} = Tensor({sizes}, dtype="{dt}")'

    def spec(dims: list) -> str:
        return ",".join(dims)

    lines = [
        "@kernel",
        f'def {{name}}(A: Tensor("{spec([*a, "KB", "KI"])}"), '
        f'B: Tensor("{spec([*b, "KB", "KI"])}"), '
        f'SA: Tensor("{spec([*av, "KB"])}"), SB: Tensor("{spec([*bv, "KB"])}")) '
        f'-> Tensor("{spec(out)}", dtype="{dtype}"):',
        new("P", [*out, "KB"], "fp32"),
        new("S", [*av, *bv, "KB"], "fp32"),
        new("C", out, dtype),
    ]

    def nest(dims: list, inner: list[tuple[str, bool]], body: str) -> list[str]:
        text, pad = [], "    "
        for d, parallel in [(d, True) for d in dims] + inner:
            flag = ", parallel=True" if parallel else ""
            text.append(f'{pad}for {d.lower()}_ in Dim("{d}"{flag}):')
            pad += "    "
        return [*text, pad + body]

    def ix(dims: list) -> str:
        return ", ".join(f"{d.lower()}_" for d in dims)

    # The products: each K-block's partial sums, at the codes' rate (a MAC statement).
    lines += nest(
        out,
        [("KB", True), ("KI", False)],
        f"P[{ix([*out, 'KB'])}] += A[{ix([*a, 'KB', 'KI'])}] * B[{ix([*b, 'KB', 'KI'])}]",
    )
    # The scales' product, once per varying row group, column group and block.
    lines += nest(
        [*av, *bv, "KB"],
        [],
        f"S[{ix([*av, *bv, 'KB'])}] = SA[{ix([*av, 'KB'])}] * SB[{ix([*bv, 'KB'])}]",
    )
    # The rescale: one multiply-add per block and output, vector work (`C = C + ...` is no
    # MAC statement: docs/ir.md §7.2).
    lines += nest(
        out,
        [("KB", False)],
        f"C[{ix(out)}] = C[{ix(out)}] + P[{ix([*out, 'KB'])}] * S[{ix([*av, *bv, 'KB'])}]",
    )
    lines.append("    return C")
    return "\n".join(lines) + "\n"


def block_scaled_mm(lw, a: NarrowOperand, b: NarrowOperand, m: int, n: int, k: int) -> Value | None:
    """C[m, n] = sum_k a[m, k] * b[n, k] as a block-scaled narrow GEMM, or None where the two
    operands' K-blocks do not line up (equal blocks, or one side constant along K)."""
    if a.kb > 1 and b.kb > 1 and a.kb != b.kb:
        return None
    kb = max(a.kb, b.kb)
    bk = k // kb
    ga = [size for size, _ in a.groups] or [1]
    gb = [size for size, _ in b.groups] or [1]
    if not a.groups:
        a.groups = [(1, False)]
    if not b.groups:
        b.groups = [(1, False)]
    codes_a = lw.reshape(a.codes, (*ga, kb, bk))
    codes_b = lw.reshape(b.codes, (*gb, kb, bk))
    sa = _scale_view(lw, a, kb)
    sb = _scale_view(lw, b, kb)
    dtype = lw.out_dtype()
    a_vary = [vary for _, vary in a.groups]
    b_vary = [vary for _, vary in b.groups]
    name = lw.add_kernel(_kernel_text(a_vary, b_vary, dtype), "mm_block_scaled")
    c = lw.call_kernel(name, [codes_a.var, codes_b.var, sa.var, sb.var], (*ga, *gb), dtype)
    lw.notes.append(
        f"{lw.node.name}: {_describe(a, 'first')} and {_describe(b, 'second')}: a block-scaled "
        "FP8 GEMM, its products priced at the fp8 rate, its per-block rescale as vector work "
        '(docs/sol-modes.md, "Narrow math inside a program")'
    )
    return lw.reshape(c, (m, n))


def _describe(op: NarrowOperand, which: str) -> str:
    """e.g. "first operand fp8 e4m3fn codes x 1x128 block scales"."""
    code = op.code_dtype.replace("torch.float8_", "fp8 ")
    # Rows sharing a scale: the constant R groups after the last varying one (all rows when
    # none varies).
    shared = 1
    for size, vary in reversed(op.groups):
        if vary:
            break
        shared *= size
    varies = any(vary for _, vary in op.groups)
    if op.kb > 1:
        how = f"{shared}x{op.bk} block scales"
    elif not varies:
        how = "a per-tensor scale"
    else:
        how = "a per-row scale" if shared == 1 else f"a scale per {shared} rows"
    return f"{which} operand {code} codes x {how}"


def try_block_scaled(lw, a, b) -> Value | None:
    """The mm `lw.node` (its FX operands; `a`, `b` lowered, a Transposed second one read
    [n, k]) as a block-scaled narrow GEMM where both operands are dequantised narrow codes."""
    node = lw.node
    if getattr(node, "op", "") != "call_function" or len(node.args) < 2:
        return None
    fa, fb = node.args[-2], node.args[-1]
    if isinstance(a, Transposed) or not isinstance(b, Transposed):
        return None  # the layouts handled: a [m, k], b read as [n, k] (a @ b.T, F.linear)
    if len(a.shape) != 2 or len(b.shape) != 2:
        return None
    m, k = a.shape
    n = b.shape[1]
    na = narrow_operand(lw, fa, False, m, k)
    nb = narrow_operand(lw, fb, True, n, k) if na else None
    if na is None or nb is None or na.code_dtype != nb.code_dtype:
        return None
    return block_scaled_mm(lw, na, nb, m, n, k)


# ------------------------------------------------------------------------- torch._scaled_mm
# `torch._scaled_mm(a, b, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum)`
# multiplies narrow operands on the matrix unit and applies their scales there. Two forms:
# - fp8 operands (e4m3 or e5m2) with fp32 scales per tensor (one element) or per row of `a`
#   ([M, 1]) and per column of `b` ([1, N]): C = (a @ b) * scale_a * scale_b, the product at
#   the fp8 rate, the rescale one epilogue multiply per output.
# - NVFP4: float4_e2m1fn_x2 operands (two E2M1 codes per byte, low nibble first) with
#   float8_e4m3fn scales, one per 16 elements of K, in the swizzled layout cuBLAS reads
#   (torch's `to_blocked`: 128 x 4 tiles of the [M, K/16] scale matrix, each stored as
#   32 x 16). The block scales are applied inside the MMA (tcgen05.mma kind::mxf4nvf4,
#   scale_vec::4X), so the kernel's product carries them as factors the core does not charge
#   (docs/ir.md §7.2), and its MACs run at the fp4 rate.
NVFP4_BLOCK = 16

_SCALED_MM_FP8 = (
    '@kernel\ndef {name}(A: Tensor("M,K", dtype="CODE"), B: Tensor("N,K", dtype="CODE"), '
    'SA: Tensor("M"), SB: Tensor("N")) -> Tensor("M,N", dtype="OUT"):\n'
    """    P = Tensor(M=A.shape[0], N=B.shape[0], dtype="fp32", fill=0)
    C = Tensor(M=A.shape[0], N=B.shape[0], dtype="OUT")
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            for k in Dim("K"):
                P[m, n] += A[m, k] * B[n, k]
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            C[m, n] = P[m, n] * SA[m] * SB[n]
    return C
"""
)

_SCALED_MM_NVFP4 = (
    '@kernel\ndef {name}(A: Tensor("M,KB,KI", dtype="nvfp4"), B: Tensor("N,KB,KI", '
    'dtype="nvfp4"), SA: Tensor("M,KB", dtype="fp8_e4m3"), SB: Tensor("N,KB", '
    'dtype="fp8_e4m3")) -> Tensor("M,N", dtype="OUT"):\n'
    """    P = Tensor(M=A.shape[0], N=B.shape[0], dtype="fp32", fill=0)
    C = Tensor(M=A.shape[0], N=B.shape[0], dtype="OUT")
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            for kb in Dim("KB"):
                for ki in Dim("KI"):
                    P[m, n] += A[m, kb, ki] * B[n, kb, ki] * SA[m, kb] * SB[n, kb]
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            C[m, n] = P[m, n]
    return C
"""
)


def _rows_of_second(lw, b) -> Value:
    """The second operand `b` [K, N] of a product as the [N, K] rows an output column reads:
    the tensor a transposed view was taken of (a row-major [N, K] weight passed as `w.t()`,
    as F.linear and the NVFP4 convention do), else a transposing copy."""
    if isinstance(b, Transposed) and tuple(b.order) == (1, 0):
        return b.base
    return lw.permute(tensor(lw, b), (1, 0))


def _torch_dtype(fx_arg) -> str:
    val = getattr(fx_arg, "meta", {}).get("val")
    return str(getattr(val, "dtype", ""))


def _unswizzled(lw, scale: Value, rows: int, cols: int) -> Value:
    """The [rows, cols] scale matrix from its swizzled 1-D layout (the inverse of torch's
    `to_blocked`: element (r, c), r = 128 rb + 32 rh + rl, c = 4 cb + ci, is stored at
    ((rb * CB + cb) * 32 + rl) * 16 + rh * 4 + ci), as a view."""
    if rows % 128 or cols % 4 or scale.numel != rows * cols:
        lw.fail(
            "torch._scaled_mm: NVFP4 scales are supported in the swizzled layout of whole "
            "128 x 4 tiles (rows a multiple of 128, blocks of K a multiple of 4, one scale "
            f"each); this operand has {rows} rows and {cols} blocks of K, and "
            f"{scale.numel} scales of shape {list(scale.shape)}"
        )
    tiles = lw.reshape(scale, (rows // 128, cols // 4, 32, 4, 4))
    return lw.reshape(lw.permute(tiles, (0, 3, 2, 1, 4), view=True), (rows, cols))


_FP8_CODES = {"torch.float8_e4m3fn": "fp8_e4m3", "torch.float8_e5m2": "fp8_e5m2"}


def scaled_mm(lw, a, b, scale_a, scale_b) -> Value:
    """`torch._scaled_mm`'s product of `a` and `b` (lowered) with their scales: fp8 with
    per-tensor or row-wise scales, or NVFP4 with swizzled 1x16 block scales."""
    node = lw.node
    code = _torch_dtype(node.args[0])
    if code != _torch_dtype(node.args[1]):
        lw.fail(
            f"torch._scaled_mm of {code} and {_torch_dtype(node.args[1])} operands is not "
            "supported (both fp8 of one kind, or both float4_e2m1fn_x2)"
        )
    a, bt = tensor(lw, a), _rows_of_second(lw, b)
    m, n = a.shape[0], bt.shape[0]
    out = lw.out_dtype()
    sa, sb = tensor(lw, scale_a), tensor(lw, scale_b)
    if code == "torch.float4_e2m1fn_x2":
        k = 2 * a.shape[1]
        if _torch_dtype(node.args[2]) != "torch.float8_e4m3fn" or k % NVFP4_BLOCK:
            lw.fail(
                "torch._scaled_mm on float4_e2m1fn_x2 operands is supported as NVFP4: "
                f"float8_e4m3fn scales, one per {NVFP4_BLOCK} elements of K (MXFP4's "
                f"float8_e8m0fnu scales have no IR dtype); got {_torch_dtype(node.args[2])} "
                f"scales and K = {k}"
            )
        kb = k // NVFP4_BLOCK
        codes_a = lw.reshape(lw.bitcast(a, "nvfp4", (m, k)), (m, kb, NVFP4_BLOCK))
        codes_b = lw.reshape(lw.bitcast(bt, "nvfp4", (n, k)), (n, kb, NVFP4_BLOCK))
        args = [codes_a, codes_b, _unswizzled(lw, sa, m, kb), _unswizzled(lw, sb, n, kb)]
        name = lw.add_kernel(_SCALED_MM_NVFP4.replace("OUT", out), "scaled_mm_nvfp4")
        what = (
            f"NVFP4 operands [{m}, {k}] and [{n}, {k}] with e4m3 scales per "
            f"{NVFP4_BLOCK} of K: a block-scaled FP4 GEMM, its products and scales on the "
            "matrix unit at the fp4 rate"
        )
    elif code in _FP8_CODES:
        if sa.numel not in (1, m) or sb.numel not in (1, n):
            lw.fail(
                "torch._scaled_mm on fp8 operands is supported with per-tensor or row-wise "
                f"scales ([{m}, 1] and [1, {n}]); got scales of shapes {list(sa.shape)} and "
                f"{list(sb.shape)}"
            )
        sa = lw.broadcast_to(lw.reshape(lw.cast(sa, "fp32"), (sa.numel,)), (m,))
        sb = lw.broadcast_to(lw.reshape(lw.cast(sb, "fp32"), (sb.numel,)), (n,))
        args = [a, bt, sa, sb]
        name = lw.add_kernel(
            _SCALED_MM_FP8.replace("CODE", _FP8_CODES[code]).replace("OUT", out), "scaled_mm_fp8"
        )
        what = f"{code.replace('torch.float8_', 'fp8 ')} operands: an FP8 GEMM at the fp8 rate"
    else:
        lw.fail(f"torch._scaled_mm on {code} operands is not supported (fp8 e4m3/e5m2, NVFP4)")
    lw.notes.append(f"{node.name}: torch._scaled_mm of {what}")
    return lw.call_kernel(name, [v.var for v in args], (m, n), out)


_INT_MM = (
    '@kernel\ndef {name}(A: Tensor("M,K", dtype="CODE"), B: Tensor("N,K", dtype="int8")) '
    '-> Tensor("M,N", dtype="int32"):\n'
    """    C = Tensor(M=A.shape[0], N=B.shape[0], dtype="int32", fill=0)
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            for k in Dim("K"):
                C[m, n] += A[m, k] * B[n, k]
    return C
"""
)


def int_mm(lw, a, b) -> Value:
    """`torch._int_mm(a, b)`: int8 [M, K] (or uint8: torchao's CPU path shifts the
    activations by 128 for the u8 x s8 instructions) times int8 [K, N] into int32 (torchao's
    dynamic int8 quantisation), its MACs at the int8 rate."""
    a, bt = tensor(lw, a), _rows_of_second(lw, b)
    if a.dtype not in ("int8", "uint8") or bt.dtype != "int8":
        lw.fail(
            f"torch._int_mm of {a.dtype} and {bt.dtype} operands: int8 (or uint8) times int8 "
            "is supported"
        )
    name = lw.add_kernel(_INT_MM.replace("CODE", a.dtype), "int_mm")
    return lw.call_kernel(name, [a.var, bt.var], (a.shape[0], bt.shape[0]), "int32")
