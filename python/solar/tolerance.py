"""The one criterion by which Solar compares an output with its expected value.

Every comparison site uses it: `solar validate` (cli.py), whole-program and scaled validation
of a PyTorch program (frontend/validate.py) and per-kernel validation (frontend/per_kernel.py,
through validate_full). docs/execution.md, "Comparing outputs", derives it; in short, element
i of a floating output matches when

    |actual_i - expected_i| <= rtol * |expected_i| + atol
    rtol = 2 u_out + u_exp                      (each side's final rounding to its format)
    atol = LAMBDA * (B + B_exp) * S + 2 eta_out (rounding accumulated on the way, and underflow)

where u is a format's unit roundoff, S the largest finite |expected| of the output, and
B = sqrt(sum_j u_j^2 n_j) sums, over the nodes the output depends on, the n_j roundings each
does per output element in its own precision u_j (a reduction of length L rounds L times per
element): the probabilistic rounding-error bound of recursive summation (Azuma's inequality on
the martingale sum of rounding errors), with the output's magnitude standing in for the
magnitudes of its partial sums. B_exp is the same sum for the reference, computed in the
precision of the expected array where that is coarser. Besides, the whole output must satisfy
the norm-wise bound rms(actual - expected) <= (rtol + LAMBDA * (B + B_exp)) rms(expected) +
2 eta_out. NaN matches NaN at the same position, an infinity the same infinity; integer and
bool outputs compare exactly.

An output that fails is compared once more (compare_all) with an allowance grown from the
computation's measured response to one-ulp changes of its inputs, where that is larger (an
ill-conditioned output: attention over large logits, a chaotic recurrence); that stage is an
estimate, and an output whose allowance reaches its magnitude is marked not informative.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np

from . import _core

# Unit roundoff u (half the spacing of the format's numbers just above 1, i.e. 2^-(p) for p
# significand bits including the implicit one): round to nearest makes |fl(x) - x| <= u |x|
# for x in the normal range.
UNIT_ROUNDOFF = {
    "fp64": 2.0**-53,
    "fp32": 2.0**-24,
    "tf32": 2.0**-11,
    "bf16": 2.0**-8,
    "fp16": 2.0**-11,
    "fp8_e4m3": 2.0**-4,
    "fp8_e5m2": 2.0**-3,
    "nvfp4": 2.0**-2,
}
# Half the smallest subnormal of each format: the absolute rounding error of a value below
# the normal range (docs/numeric-formats.md lists the smallest subnormals).
UNDERFLOW = {
    "fp64": 2.0**-1075,
    "fp32": 2.0**-150,
    "tf32": 2.0**-137,
    "bf16": 2.0**-134,
    "fp16": 2.0**-25,
    "fp8_e4m3": 2.0**-10,
    "fp8_e5m2": 2.0**-17,
    "nvfp4": 2.0**-2,
}
EXACT = {"int64", "int32", "int16", "int8", "uint8", "int4", "bool"}

# Azuma's inequality: a sum of n rounding errors delta_k * s_k with |delta_k| <= u exceeds
# LAMBDA * u * sqrt(sum s_k^2) with probability at most 2 exp(-LAMBDA^2 / 2) = 2.5e-14.
LAMBDA = 8.0
# Roundings charged per transcendental (exp, log, tanh, erf, ...): libm and vectorised
# implementations are accurate to a few units in the last place.
TRANSCENDENTAL_ROUNDINGS = 4
# Budget of a comparison made without a graph: a few elementwise operations.
DEFAULT_ROUNDINGS = 8

# The NumPy dtypes an expected array may come in, and the IR format each is.
_NUMPY_FORMAT = {
    np.dtype(np.float64): "fp64",
    np.dtype(np.float32): "fp32",
    np.dtype(np.float16): "fp16",
    np.dtype(ml_dtypes.bfloat16): "bf16",
    np.dtype(ml_dtypes.float8_e4m3fn): "fp8_e4m3",
    np.dtype(ml_dtypes.float8_e5m2): "fp8_e5m2",
    np.dtype(ml_dtypes.float4_e2m1fn): "nvfp4",
}
FLOAT_TYPES = frozenset(_NUMPY_FORMAT)
CHUNK = 1 << 20  # elements compared at a time (bounds the comparison's own memory)


@dataclass(frozen=True)
class Budget:
    """The rounding one output accumulates, as (unit roundoff, roundings per element) pairs
    summed over the nodes it depends on."""

    roundings: tuple = ()  # ((u, n), ...), one pair per distinct u
    nodes: int = 0  # nodes that round on the way to this output

    def relative(self, floor: float = 0.0) -> float:
        """B = sqrt(sum u^2 n), each u raised to at least `floor` (a coarser reference)."""
        return math.sqrt(sum(max(u, floor) ** 2 * n for u, n in self.roundings))

    @property
    def coarsest(self) -> float:
        """The largest unit roundoff among the roundings (0 when nothing rounds)."""
        return max((u for u, _ in self.roundings), default=0.0)

    @property
    def count(self) -> float:
        return sum(n for _, n in self.roundings)

    @staticmethod
    def elementwise(dtype: str, roundings: int = DEFAULT_ROUNDINGS) -> Budget:
        u = UNIT_ROUNDOFF.get(dtype, 0.0)
        return Budget(((u, roundings),), 1) if u else Budget()


def _compute_unit(dtype: str) -> float:
    """Unit roundoff of the arithmetic of a nest that stores floating `dtype`: formats
    narrower than fp64 compute in fp32, fp64 in fp64."""
    return UNIT_ROUNDOFF["fp64"] if dtype == "fp64" else UNIT_ROUNDOFF["fp32"]


def _self_reads(expr: str, name: str) -> list[list[str]]:
    """The index expressions of every read of `name` in a nest's body text."""
    reads = []
    for m in re.finditer(rf"(?<![\w.]){re.escape(name)}\s*\[", expr):
        depth, start, parts = 1, m.end(), []
        for k in range(m.end(), len(expr)):
            ch = expr[k]
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
                if depth == 0:
                    parts.append(expr[start:k].strip())
                    break
            elif ch == "," and depth == 1:
                parts.append(expr[start:k].strip())
                start = k + 1
        reads.append(parts)
    return reads


def _scan_length(e) -> int:
    """How many points of a nest one element can depend on through reads of its own target:
    1 without such reads or when they read the element being written (Y[j] = Y[j] / n); for
    a scan (Y[i, j] = Y[i, j - 1] + X[i, j]) the sizes of the ranks whose index the read
    shifts, summed; the sum of every rank size when the reads cannot be matched to dims."""
    reads = _self_reads(e.map_expr, e.output_name)
    sizes = dict(zip(e.ranks, (int(s) for s in e.rank_sizes), strict=True))
    dims = [list(r) for r in e.output_ranks]
    shifted: set = set()
    for index in reads:
        if len(index) != len(dims):
            return sum(sizes.values())
        for expr, ranks in zip(index, dims, strict=True):
            if not re.fullmatch(r"[A-Za-z_]\w*", expr):
                shifted.update(ranks)
    return max(sum(sizes.get(r, 1) for r in shifted), 1)


def _nest_roundings(e, final: bool, elements: int = 0) -> list[tuple[float, float]]:
    """(u, n) of one loop nest, per element of what it writes. A nest rounds c times per
    point (its operators, a transcendental counting TRANSCENDENTAL_ROUNDINGS, a MAC two, at
    least the store); an element of a `+=`/`*=` reduction gathers L points (L the product of
    the reduced ranks), and in a nest that reads its own target at a shifted index (a scan,
    Y[j] = Y[j-1] + X[j]) an element chains up to the size of the shifted ranks. The store
    rounds to the written format, the rest in the compute precision. `final`: the store is
    the output's final rounding, counted by the relative term instead. `elements`: the size
    of the written tensor when it is a graph tensor (0: a kernel-local one); a reduction that
    writes at an affine index (a transposed convolution's scatter, Y[p*s + r] += ...) gathers
    at least points / elements points per element."""
    if e.output_dtype not in UNIT_ROUNDOFF:
        return []  # integer and bool targets hold exact values (compared exactly)
    points = max(int(e.points), 1)
    f = e.flops
    ops = (
        f["add"] + f["mul"] + f["div"] + f["other"] + TRANSCENDENTAL_ROUNDINGS * f["transcendental"]
    )
    c = max((ops + 2 * int(e.macs)) / points, 1.0)
    if e.reduce in ("+", "*"):
        length = math.prod(
            int(s) for r, s in zip(e.ranks, e.rank_sizes, strict=True) if r in set(e.reduced_ranks)
        )
        if elements:
            length = max(length, -(-points // elements))
    else:
        length = _scan_length(e) if e.reduce == "none" else 1
    u_store = UNIT_ROUNDOFF.get(e.output_dtype, 0.0)
    u_compute = _compute_unit(e.output_dtype)
    out = [(u_compute, length * (c - 1))]
    if not (final and length == 1):
        out.append((u_store, float(length)))
    return out


def _node_roundings(tensors, node, final_tensors: set) -> list[tuple[float, float]]:
    """(u, n) pairs of one node; `tensors`: the graph's tensors (graph.tensors, read once by
    the caller); `final_tensors`: its output
    tensors that are (views of) the compared output, whose last store is counted as the
    final rounding."""
    if node.kind == "data_movement":
        t = tensors[node.outputs[0]]
        u = UNIT_ROUNDOFF.get(t.dtype, 0.0)
        if node.op == "scatter_add":
            # An output element takes at most as many adds as the index has positions along
            # the scattered dim (all of them landing on it), each rounded to the dtype.
            adds = tensors[node.inputs[1]].shape[node.attributes["axis"]]
            return [(u, float(adds))] if u else []
        if node.op == "fft":
            # log2(n) butterfly stages, each rounding a few times (a complex product and
            # two sums: 6). The values a stage rounds are sums of 2^k inputs, which the
            # output's magnitude bounds, as for a reduction's partial sums.
            stages = max(1, math.ceil(math.log2(max(node.attributes["n"], 2))))
            return [(u, 6.0 * stages)] if u else []
        # A cast rounds to its format, a constant to its dtype; every other builtin moves
        # values unchanged.
        rounds = node.op == "cast" or node.op in ("constant", "iota") and u
        if not rounds or node.outputs[0] in final_tensors:
            return []
        return [(u, 1.0)]
    finals = {tensors[t].name.rsplit(".", 1)[-1] for t in final_tensors}
    sizes = {tensors[t].name.rsplit(".", 1)[-1]: tensors[t].elements for t in node.outputs}
    pairs = []
    for e in node.einsums:
        pairs += _nest_roundings(e, e.output_name in finals, int(sizes.get(e.output_name, 0)))
    return pairs


# Builtins that pass values through unchanged (the `moves` column of the C++ registry,
# graph/ops.def): the final rounding of an output they return happened in the node that
# computed those values.
_PASS_THROUGH = frozenset(b["name"] for b in _core.builtins() if b["moves"])


def output_budgets(graph) -> list[Budget]:
    """The Budget of each graph output, in model()'s return order."""
    tensors, nodes = graph.tensors, graph.nodes
    budgets = []
    for out in graph.outputs:
        # Tensors whose last store is the output's final rounding: the output, and through
        # builtins that only move values, the tensors it is made of.
        final, stack = set(), [out]
        while stack:
            t = stack.pop()
            if t in final:
                continue
            final.add(t)
            p = tensors[t].producer
            if p >= 0 and nodes[p].kind == "data_movement" and nodes[p].op in _PASS_THROUGH:
                stack += list(nodes[p].inputs)
        seen, stack, pairs, rounding_nodes = set(), [out], {}, 0
        while stack:
            p = tensors[stack.pop()].producer
            if p < 0 or p in seen:
                continue
            seen.add(p)
            node = nodes[p]
            node_pairs = _node_roundings(tensors, node, final & set(node.outputs))
            if any(n > 0 and u > 0 for u, n in node_pairs):
                rounding_nodes += 1
            for u, n in node_pairs:
                if u > 0 and n > 0:
                    pairs[u] = pairs.get(u, 0.0) + n
            stack += list(node.inputs)
        budgets.append(Budget(tuple(sorted(pairs.items())), rounding_nodes))
    return budgets


@dataclass
class Comparison:
    """How one output compares with its expected value. Element i matches when
    |actual_i - expected_i| <= atol + rtol |expected_i| (NaN with NaN, an infinity with the
    same infinity); `norm_error` is ||actual - expected||_2 / ||expected||_2 over the
    elements where both are finite, allowed up to `norm_allowed`."""

    name: str
    ok: bool
    shape: tuple
    expected_shape: tuple
    dtype: str
    expected_dtype: str
    rtol: float = 0.0
    atol: float = 0.0
    criterion: str = ""  # where rtol and atol come from, in words
    max_abs_error: float = 0.0
    max_rel_error: float = 0.0
    max_ratio: float = 0.0  # largest |error| / allowed error over the elements
    mismatches: int = 0
    elements: int = 0
    first_mismatch: tuple | None = None
    first_values: tuple | None = None  # (actual, expected)
    first_allowed: float = 0.0
    worst_index: tuple | None = None  # the element with the largest error / allowed
    worst_values: tuple | None = None
    worst_error: float = 0.0
    worst_allowed: float = 0.0
    norm_error: float = 0.0
    norm_allowed: float = 0.0
    response: float | None = None  # largest measured response, where it set atol
    informative: bool = True  # False when an all-zero output would pass too (_decide)
    decided_wide: bool = False  # decided by the widened run (decide_against_wide)
    nan_count: int = 0
    inf_count: int = 0
    expected_nan_count: int = 0
    notes: list = field(default_factory=list)

    def summary(self, where: str = "") -> str:
        """One line naming the output, how many elements differ, the worst error against
        its allowed error, the first mismatch and the norm-wise error. `where`: words after
        "differs" ("at the program's own sizes")."""
        where = f" {where}" if where else ""
        if self.ok:
            return f"{self.name} matches{where} ({self.elements} elements; {self.criterion})"
        if self.shape != self.expected_shape:
            return f"{self.name} differs{where}: " + "; ".join(self.notes)
        if self.mismatches:
            parts = [
                f"{self.name} differs{where}: {self.mismatches} of {self.elements} elements "
                "outside the allowed error"
            ]
        else:
            parts = [f"{self.name} differs{where}: every element within its allowed error"]
        if self.worst_index is not None:
            got, want = self.worst_values
            parts.append(
                f"worst at {list(self.worst_index)}: {got!r} vs {want!r}, error "
                f"{self.worst_error:.3g} > allowed {self.worst_allowed:.3g}"
            )
        if self.first_mismatch is not None and self.first_mismatch != self.worst_index:
            got, want = self.first_values
            parts.append(f"first at {list(self.first_mismatch)}: {got!r} vs {want!r}")
        if self.norm_error > self.norm_allowed:
            parts.append(
                f"norm-wise relative error {self.norm_error:.3g} > allowed {self.norm_allowed:.3g}"
            )
        parts.append(self.criterion)
        parts += self.notes
        return "; ".join(parts)


def _format_of(a: np.ndarray) -> str:
    return _NUMPY_FORMAT.get(a.dtype, "fp64" if a.dtype.kind == "f" else "int")


def _flat(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).reshape(-1)


def _to_numpy(value) -> np.ndarray:
    """NumPy view of a NumPy array, a PyTorch tensor (zero-copy on the CPU) or a scalar."""
    if isinstance(value, np.ndarray):
        return value
    mod = type(value).__module__
    if mod.startswith("torch"):
        import torch

        t = value.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        if t.dtype == torch.bfloat16:
            return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        if t.dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
            target = (
                ml_dtypes.float8_e4m3fn if t.dtype == torch.float8_e4m3fn else ml_dtypes.float8_e5m2
            )
            return t.view(torch.uint8).numpy().view(target)
        if str(t.dtype) == "torch.float4_e2m1fn_x2":  # two E2M1 codes per byte: the bytes
            return t.view(torch.uint8).numpy()
        return t.numpy()
    return np.asarray(value)


def compare(
    name,
    actual,
    expected,
    dtype: str,
    budget: Budget | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    response: tuple | None = None,
) -> Comparison:
    """Compares one output (IR dtype `dtype`) with its expected value. `budget`: the
    output's accumulated rounding (output_budgets); None charges DEFAULT_ROUNDINGS in the
    output's format. `response`: (largest, rms, unit) change of the output between two runs
    whose inputs differ by one ulp of relative size `unit` (output_response()): where the
    allowance it implies exceeds the a-priori one, it replaces it (an ill-conditioned
    output). `rtol`/`atol`, when given, replace the derived criterion by the fixed one
    |actual - expected| <= atol + rtol |expected| (a missing one is 0)."""
    actual = _to_numpy(actual)
    expected = _to_numpy(expected)
    c = Comparison(
        name=name,
        ok=True,
        shape=tuple(actual.shape),
        expected_shape=tuple(expected.shape),
        dtype=dtype,
        expected_dtype=str(expected.dtype),
        elements=int(actual.size),
    )
    if c.shape != c.expected_shape:
        c.ok = False
        c.notes.append(f"shape {list(c.shape)} differs from expected {list(c.expected_shape)}")
        return c
    a, e = _flat(actual), _flat(expected)
    if dtype in EXACT or dtype not in UNIT_ROUNDOFF:
        _compare_exact(c, a, e, actual.shape)
        return c
    # First pass: the output's magnitude S (largest finite |expected|) and NaN/Inf counts.
    scale = 0.0
    for s in range(0, a.size, CHUNK):
        ea = e[s : s + CHUNK].astype(np.float64)
        aa = a[s : s + CHUNK].astype(np.float64)
        fin = np.isfinite(ea)
        if fin.any():
            scale = max(scale, float(np.abs(ea[fin]).max()))
        c.expected_nan_count += int(np.isnan(ea).sum())
        c.nan_count += int(np.isnan(aa).sum())
        c.inf_count += int(np.isinf(aa).sum())

    if rtol is not None or atol is not None:
        c.rtol, c.atol = float(rtol or 0.0), float(atol or 0.0)
        c.criterion = f"allowed |error| <= {c.atol:.3g} + {c.rtol:.3g}|expected| (given)"
        accumulated = None
    else:
        budget = Budget.elementwise(dtype) if budget is None else budget
        u_exp = UNIT_ROUNDOFF.get(_format_of(e), 0.0)
        b, b_exp = budget.relative(), budget.relative(u_exp)
        c.rtol = 2 * UNIT_ROUNDOFF[dtype] + u_exp
        accumulated = LAMBDA * (b + b_exp)
        c.atol = accumulated * scale + 2 * UNDERFLOW[dtype]
        conditioned = False
        if response is not None:
            # An ill-conditioned output: its rounding errors act on its response to rounding-
            # sized changes rather than on its magnitude (docs/execution.md).
            largest, rms, unit = response
            spread = _conditioned(b + b_exp, budget.coarsest, largest, rms, unit)
            if spread > c.atol:
                conditioned = True
                c.response = largest
                c.atol = spread + 2 * UNDERFLOW[dtype]
        c.criterion = (
            f"allowed |error| <= {c.rtol:.3g}|expected| + {c.atol:.3g} "
            f"({dtype} output, {budget.count:,.0f} roundings per element over {budget.nodes} "
            f"node(s): B = {b:.3g}"
            + (f", reference B = {b_exp:.3g}" if b_exp != b else "")
            + f"; largest |expected| {scale:.3g}"
            + (
                f"; ill-conditioned: a one-ulp change of the inputs moves it by up to "
                f"{response[0]:.3g} (rms {response[1]:.3g})"
                if conditioned
                else ""
            )
            + ")"
        )
        if scale == 0.0 and a.size and not conditioned:
            c.notes.append(
                "the expected output has no nonzero finite element: there is no magnitude to "
                "scale the allowed error by (pass --atol to allow one)"
            )

    sq_d = sq_e = 0.0
    finite_count = 0
    zero_rejected = 0  # elements at which an all-zero output would fail (decisive())
    worst_ratio = -1.0
    for s in range(0, a.size, CHUNK):
        aa = a[s : s + CHUNK].astype(np.float64)
        ea = e[s : s + CHUNK].astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            both_nan = np.isnan(aa) & np.isnan(ea)
            same_inf = np.isinf(ea) & (aa == ea)
            fin = np.isfinite(aa) & np.isfinite(ea)
            diff = np.where(fin, np.abs(aa - ea), np.inf)
            diff[both_nan | same_inf] = 0.0
            allowed = c.atol + c.rtol * np.where(np.isfinite(ea), np.abs(ea), 0.0)
            bad = ~(diff <= allowed)
            zero_rejected += int(np.sum(np.isfinite(ea) & (np.abs(ea) > allowed)))
            if fin.any():
                d = diff[fin]
                c.max_abs_error = max(c.max_abs_error, float(d.max()))
                ef_abs = np.abs(ea[fin])
                rel = np.where(
                    ef_abs > 0, d / np.where(ef_abs > 0, ef_abs, 1.0), np.where(d > 0, np.inf, 0.0)
                )
                c.max_rel_error = max(c.max_rel_error, float(rel.max()))
                if scale > 0:
                    sq_d += float(np.sum((d / scale) ** 2))
                    sq_e += float(np.sum((ea[fin] / scale) ** 2))
                finite_count += int(fin.sum())
            ratio = np.where(
                allowed > 0,
                diff / np.where(allowed > 0, allowed, 1.0),
                np.where(diff > 0, np.inf, 0.0),
            )
        if ratio.size:
            c.max_ratio = max(c.max_ratio, float(ratio.max()))
        n_bad = int(bad.sum())
        if n_bad:
            if c.first_mismatch is None:
                k = int(np.flatnonzero(bad)[0])
                idx = np.unravel_index(s + k, actual.shape)
                c.first_mismatch = tuple(int(i) for i in idx)
                c.first_values = (float(aa[k]), float(ea[k]))
                c.first_allowed = float(allowed[k])
            k = int(np.argmax(np.where(bad, ratio, -1.0)))
            if ratio[k] > worst_ratio:
                worst_ratio = float(ratio[k])
                idx = np.unravel_index(s + k, actual.shape)
                c.worst_index = tuple(int(i) for i in idx)
                c.worst_values = (float(aa[k]), float(ea[k]))
                c.worst_error = float(diff[k])
                c.worst_allowed = float(allowed[k])
        c.mismatches += n_bad
    if scale > 0 and sq_e > 0:
        c.norm_error = math.sqrt(sq_d / sq_e)
    if accumulated is not None and sq_e > 0:
        # rms(error) <= rtol rms(expected) + max(accumulated rms(expected), LAMBDA rms(response))
        rms = scale * math.sqrt(sq_e / finite_count)
        spread = 0.0
        if c.response is not None:
            _, rms_response, unit = response
            spread = _conditioned(b + b_exp, budget.coarsest, rms_response, rms_response, unit)
            spread /= rms
        c.norm_allowed = c.rtol + max(accumulated, spread) + 2 * UNDERFLOW[dtype] / rms
    elif accumulated is not None:
        c.norm_allowed = 0.0  # nothing finite and nonzero expected: the elements decide
    else:
        c.norm_allowed = math.inf
    c.ok = c.mismatches == 0 and c.norm_error <= c.norm_allowed
    _decide(c, scale, zero_rejected)
    return c


def _decide(c: Comparison, scale: float, zero_rejected: int) -> None:
    """Whether the comparison can decide (docs/execution.md, "When a comparison cannot
    decide"): it can when an all-zero output would fail it, at some element
    (|expected_i| > atol + rtol |expected_i|) or norm-wise (norm_allowed < 1, the relative
    error of zeros). An expected output with no nonzero finite element is decided (zeros are
    then the right answer, and anything else beyond atol fails)."""
    if c.elements == 0 or scale == 0.0 or zero_rejected or c.norm_allowed < 1.0:
        return
    c.informative = False
    largest = c.atol + c.rtol * scale
    c.notes.append(
        f"the allowed error ({largest:.3g} at the largest |expected|) is not below the "
        f"output's largest magnitude ({scale:.3g}): an all-zero output would pass too, so the "
        "comparison cannot tell a correct result from a wrong one"
    )


def _conditioned(b: float, coarsest: float, largest: float, rms: float, unit: float) -> float:
    """The allowance of an ill-conditioned output from its measured response to a one-ulp
    (relative `unit`) change of the inputs: rounding of relative size b acts like a change of
    the inputs b/unit times as large, so LAMBDA * b/unit * rms(response); and at least LAMBDA
    times twice the largest response at the output's coarsest rounding, since both sides
    round."""
    if not unit:
        return 0.0
    return LAMBDA * max(b / unit * rms, 2 * largest * max(coarsest, unit) / unit)


def compare_all(
    names,
    actuals,
    expecteds,
    dtypes,
    budgets,
    rerun=None,
    base: str = "actual",
    rtol=None,
    atol=None,
    wide=None,
) -> list[Comparison]:
    """Compares every output (the lists in one order), in two stages. First each with its
    a-priori budget; then, only if some floating output failed and `rerun` is given, the
    computation is run once more on inputs moved by one ulp (`rerun()` returns those outputs
    and the perturbation's unit roundoff, or None), and each failed output is compared again
    with its measured response (an ill-conditioned output's rounding errors act on that, not
    on its magnitude). `base`: which side `rerun` recomputes ("actual": the IR program,
    "expected": the reference). `wide`: where some output passed a comparison that cannot
    decide (Comparison.informative false), `wide()` runs the computation widened, and those
    outputs are compared there (decide_against_wide)."""
    results = [
        compare(n, a, e, d, b, rtol, atol)
        for n, a, e, d, b in zip(names, actuals, expecteds, dtypes, budgets, strict=True)
    ]
    failed = [
        i
        for i, c in enumerate(results)
        if not c.ok and c.dtype in UNIT_ROUNDOFF and c.shape == c.expected_shape
    ]
    if failed and rerun is not None and rtol is None and atol is None:
        _second_stage(results, failed, names, actuals, expecteds, dtypes, budgets, rerun, base)
    if wide is not None and rtol is None and atol is None:
        decide_against_wide(results, wide)
    return results


def _second_stage(results, failed, names, actuals, expecteds, dtypes, budgets, rerun, base):
    """Compares each failed output again with its measured response to one-ulp changes of
    the inputs (compare_all)."""
    again = rerun()
    if again is None:
        return
    perturbed, unit = again
    for i in failed:
        side = actuals[i] if base == "actual" else expecteds[i]
        largest, rms = output_response(side, perturbed[i])
        results[i] = compare(
            names[i],
            actuals[i],
            expecteds[i],
            dtypes[i],
            budgets[i],
            response=(largest, rms, unit),
        )


def decide_against_wide(results, wide) -> None:
    """For each output that passed a comparison that cannot decide (`informative` false),
    the comparison of the same computation widened (`wide()`: (actuals, expecteds, dtypes,
    budgets, rerun) of the lowered program and its reference with bf16 and fp16 widened to
    fp32, in compare_all's order, or a string saying why they cannot run so) by the same
    derived criterion (docs/execution.md, "When a comparison cannot decide"). Where that
    fails, the output is judged again with its measured response, as compare_all's second
    stage does (`rerun()`: the widened reference's outputs with its inputs moved by one ulp,
    and that unit, or None): an ill-conditioned output's rounding errors act on its
    response, not on its magnitude. The widened comparison replaces the first when it
    decides, passing or failing; else the output stays undecided, with a note."""
    pending = [
        i for i, c in enumerate(results) if c.ok and not c.informative and c.dtype in UNIT_ROUNDOFF
    ]
    if not pending:
        return
    widened = wide()
    if isinstance(widened, str):
        for i in pending:
            results[i].notes.append(f"no widened run decides ({widened})")
        return
    actuals, expecteds, dtypes, budgets, rerun = widened
    responses = None  # the widened reference's perturbed run, made once if some output fails
    for i in pending:
        c = results[i]
        if i >= len(actuals) or i >= len(expecteds):
            c.notes.append("the widened run gives no such output")
            continue
        judged = compare(c.name, actuals[i], expecteds[i], dtypes[i], budgets[i])
        if not judged.ok and judged.informative and judged.shape == c.shape:
            if responses is None:
                responses = rerun() or ()
            if responses and i < len(responses[0]):
                perturbed, unit = responses
                largest, rms = output_response(expecteds[i], perturbed[i])
                judged = compare(
                    c.name,
                    actuals[i],
                    expecteds[i],
                    dtypes[i],
                    budgets[i],
                    response=(largest, rms, unit),
                )
        if not judged.informative or judged.shape != c.shape:
            c.notes.append(
                "in the widened run too the allowed error reaches the output's magnitude"
                if judged.shape == c.shape
                else "the widened run's output has another shape"
            )
            continue
        judged.criterion = (
            f"widened (bf16 and fp16 computed as fp32 on both sides): {judged.criterion}"
        )
        judged.decided_wide = True
        results[i] = judged


def perturbation_unit(values) -> float:
    """The unit roundoff of the coarsest floating format among `values` (0 if none)."""
    units = [UNIT_ROUNDOFF.get(_format_of(_to_numpy(v)), 0.0) for v in values]
    return max([u for u in units if u] or [0.0])


def perturb(value, rng: np.random.Generator):
    """`value` (a NumPy array or a PyTorch tensor) with every finite element of a floating
    format moved by one unit in the last place, up or down at random; anything else as it
    is. The response of a computation to such a change measures its conditioning
    (docs/execution.md, "Ill-conditioned outputs")."""
    if type(value).__module__.startswith("torch"):
        import torch

        if not value.is_floating_point():
            return value
        # np.asarray: for a 0-d tensor `rng.random(())` is a NumPy scalar, not an array
        up = torch.from_numpy(np.asarray(rng.random(tuple(value.shape)) < 0.5))
        try:
            big = torch.finfo(value.dtype).max
            target = torch.where(up, big, -big).to(value.dtype)
            moved = torch.nextafter(value.detach(), target)
        except (RuntimeError, TypeError):
            return value  # a format without nextafter (fp8): left unchanged
        return torch.where(torch.isfinite(value), moved, value)
    a = np.asarray(value)
    if a.dtype.kind != "f" and a.dtype not in _NUMPY_FORMAT:
        return a
    big = np.array(ml_dtypes.finfo(a.dtype).max, dtype=a.dtype)
    up = rng.random(a.shape) < 0.5
    with np.errstate(invalid="ignore"):
        moved = np.where(up, np.nextafter(a, big), np.nextafter(a, -big))
    return np.where(np.isfinite(a.astype(np.float64)), moved, a).astype(a.dtype)


def output_response(base, perturbed) -> tuple[float, float]:
    """(largest, root-mean-square) change of an output between a run on the inputs and a
    run on the perturbed inputs, over the elements where both are finite."""
    a, b = _flat(_to_numpy(base)), _flat(_to_numpy(perturbed))
    if a.size == 0 or a.shape != b.shape:
        return 0.0, 0.0
    total, largest, count = 0.0, 0.0, 0
    for s in range(0, a.size, CHUNK):
        x, y = a[s : s + CHUNK].astype(np.float64), b[s : s + CHUNK].astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            fin = np.isfinite(x) & np.isfinite(y)
            d = np.abs(x[fin] - y[fin])
        if d.size:
            total += float(np.sum(d**2))
            largest = max(largest, float(d.max()))
        count += int(fin.sum())
    return (largest, math.sqrt(total / count)) if count else (0.0, 0.0)


def _compare_exact(c: Comparison, a: np.ndarray, e: np.ndarray, shape) -> None:
    """Integer and bool outputs: every element equal (integers compared as integers)."""
    c.criterion = f"{c.dtype} output: exact"
    c.norm_allowed = math.inf
    integral = a.dtype.kind in "iub" and e.dtype.kind in "iub"
    for s in range(0, a.size, CHUNK):
        aa, ea = a[s : s + CHUNK], e[s : s + CHUNK]
        if integral:
            bad = aa.astype(np.int64) != ea.astype(np.int64)
            if a.dtype == np.uint64 or e.dtype == np.uint64:
                bad = aa.astype(object) != ea.astype(object)
        else:
            with np.errstate(invalid="ignore"):
                af, ef = aa.astype(np.float64), ea.astype(np.float64)
                bad = ~((af == ef) | (np.isnan(af) & np.isnan(ef)))
        n_bad = int(np.sum(bad))
        if n_bad:
            k = int(np.flatnonzero(bad)[0])
            if c.first_mismatch is None:
                idx = tuple(int(i) for i in np.unravel_index(s + k, shape))
                c.first_mismatch = c.worst_index = idx
                c.first_values = c.worst_values = (aa[k].item(), ea[k].item())
                diff = abs(float(aa[k]) - float(ea[k]))
                c.worst_error = diff
            c.max_abs_error = max(
                c.max_abs_error,
                float(np.max(np.abs(aa[bad].astype(np.float64) - ea[bad].astype(np.float64)))),
            )
        c.mismatches += n_bad
    c.ok = c.mismatches == 0
