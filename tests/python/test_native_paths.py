"""The native backend's fast paths (src/exec/native.cpp, run without bounds checks as
validation runs it) against the interpreter and against NumPy written by hand.

Each program below aims at one path: affine guard conjuncts turned into bounds of the
innermost loop (positive, negative and non-unit coefficients, conjuncts without the
innermost loop, and the conjuncts that stay per element: `!=`, `or`, `not`); register
reductions (sum, product, max and min, with NaN propagating); a recurrence that must stay
sequential; a short innermost loop moved outwards; a one-loop nest run in parallel blocks;
and GEMMs reading transposed operands in place, writing a transposed target in place,
packing a guarded operand and splitting a convolution around its image loop. The generated
source (kept in SOLAR_CACHE_DIR) is checked for the plan each program should get.

Tolerances: fp32 sums may be reassociated (SIMD lanes, GEMM blocking), so floating outputs
agree to ``rtol = 1e-5`` and ``atol = 1e-5 * max(1, max|reference|)``; the guard, recurrence
and parallel-block programs do no reassociation and agree exactly with the interpreter.
"""

from __future__ import annotations

import math
import pathlib

import numpy as np
import pytest
import solar

pytestmark = pytest.mark.native

HEADER = "from solar.ir import Dim, Tensor, kernel\n# ruff: noqa: F821\n"


def _run(tmp_path: pathlib.Path, monkeypatch, source: str, inputs: list, dims: dict):
    """(native outputs, interpreter outputs, generated C++ text) of one program."""
    cache = tmp_path / "kernels"
    monkeypatch.setenv("SOLAR_CACHE_DIR", str(cache))
    path = tmp_path / "prog.py"
    path.write_text(HEADER + source)
    try:
        native = solar.run(str(path), inputs, dims=dims, backend="native", bounds_check=False)
    except solar.UserError as err:
        if "compile" in str(err) or "compiler" in str(err):
            pytest.skip(f"native backend unavailable: {err}")
        raise
    interp = solar.run(str(path), inputs, dims=dims, backend="interpreter")
    cpp = "\n".join(p.read_text() for p in sorted(cache.rglob("*.cpp")))
    return native, interp, cpp


def _close(a, b, what: str):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape, what
    atol = 1e-5 * max(1.0, float(np.nanmax(np.abs(b), initial=0.0)))
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=atol, err_msg=what)


BAND = """
@kernel
def band(X: Tensor("M,N")) -> Tensor("M,N"):
    Y = Tensor(M=X.shape[0], N=X.shape[1])
    for i in Dim("M", parallel=True):
        for j in Dim("N", parallel=True):
            if (
                0 <= j - i + 1
                and 2 * j - 3 * i < 5
                and size("N") - 1 - j >= 0
                and i >= 1
                and i != j
                and (i < 3 or j >= 4)
                and not (j == 6)
            ):
                Y[i, j] = X[i, size("N") - 1 - j] * 2.0
    return Y


def model(x: Tensor("M,N", role="input")):
    return band(x)
"""


def test_affine_guards_become_loop_bounds(tmp_path, monkeypatch):
    m, n = 7, 13
    x = np.arange(m * n, dtype=np.float32).reshape(m, n) + 1
    native, interp, cpp = _run(tmp_path, monkeypatch, BAND, [x], {"M": m, "N": n})
    expect = np.zeros((m, n), np.float32)
    for i in range(m):
        for j in range(n):
            keep = (
                0 <= j - i + 1
                and 2 * j - 3 * i < 5
                and n - 1 - j >= 0
                and i >= 1
                and i != j
                and (i < 3 or j >= 4)
                and not j == 6
            )
            if keep:
                expect[i, j] = x[i, n - 1 - j] * 2
    # Row 1: 0 <= j and 2j - 3 < 5 keep j in [0, 4), i != j drops j = 1, so x[1, 12] = 26,
    # x[1, 10] = 24 and x[1, 9] = 23 (x = 1 + the flat position) doubled, then zeros.
    assert expect[1].tolist()[:5] == [52, 0, 48, 46, 0]
    np.testing.assert_array_equal(native["out0"], expect)
    np.testing.assert_array_equal(interp["out0"], expect)
    # The four affine conjuncts narrow the loop; `!=`, `or` and `not` stay per element.
    assert cpp.count("narrow(") >= 4


REDUCE = """
@kernel
def rmax(X: Tensor("M,N")) -> Tensor("M"):
    R = Tensor(M=X.shape[0], fill=-inf)
    for i in Dim("M", parallel=True):
        for j in Dim("N"):
            R[i] = max(R[i], X[i, j])
    return R


@kernel
def rmin(X: Tensor("M,N")) -> Tensor("M"):
    R = Tensor(M=X.shape[0], fill=inf)
    for i in Dim("M", parallel=True):
        for j in Dim("N"):
            R[i] = min(R[i], X[i, j])
    return R


@kernel
def rsum(X: Tensor("M,N")) -> Tensor("M"):
    R = Tensor(M=X.shape[0])
    for i in Dim("M", parallel=True):
        for j in Dim("N"):
            R[i] += X[i, j] * X[i, j]
    return R


@kernel
def rprod(X: Tensor("M,N")) -> Tensor("M"):
    R = Tensor(M=X.shape[0], fill=1)
    for i in Dim("M", parallel=True):
        for j in Dim("N"):
            R[i] *= X[i, j]
    return R


@kernel
def csum(X: Tensor("M,N")) -> Tensor("N"):
    R = Tensor(N=X.shape[1])
    for i in Dim("M"):
        for j in Dim("N", parallel=True):
            R[j] += X[i, j]
    return R


def model(x: Tensor("M,N", role="input")):
    return rmax(x), rmin(x), rsum(x), rprod(x), csum(x)
"""


def test_register_reductions_with_nan(tmp_path, monkeypatch):
    m, n = 5, 37  # 37: two 16-lane vectors and a remainder
    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 1.5, (m, n)).astype(np.float32)
    x[2, 20] = np.nan  # row 2: max, min, sum and product are NaN; column 20's sum is NaN
    native, interp, cpp = _run(tmp_path, monkeypatch, REDUCE, [x], {"M": m, "N": n})
    x64 = x.astype(np.float64)
    expect = [x64.max(1), x64.min(1), (x64 * x64).sum(1), x64.prod(1), x64.sum(0)]
    for k, e in enumerate(expect):
        _close(native[f"out{k}"], e, f"out{k} native")
        _close(interp[f"out{k}"], e, f"out{k} interpreter")
    for k in range(4):
        assert math.isnan(native[f"out{k}"][2]), f"out{k}: NaN in row 2 must propagate"
    for op in ("max:acc", "min:acc", "+:acc", "*:acc"):
        assert f"#pragma omp simd reduction({op})" in cpp


RECURRENCE = """
@kernel
def cum(X: Tensor("R,N")) -> Tensor("R,N"):
    Y = Tensor(R=X.shape[0], N=X.shape[1])
    for r in Dim("R", parallel=True):
        for j in Dim("N"):
            if j >= 1:
                Y[r, j] = Y[r, j - 1] + X[r, j]
    return Y


def model(x: Tensor("R,N", role="input")):
    return cum(x)
"""


def test_a_recurrence_stays_sequential(tmp_path, monkeypatch):
    x = np.ones((3, 40), np.float32)
    native, interp, cpp = _run(tmp_path, monkeypatch, RECURRENCE, [x], {"R": 3, "N": 40})
    # Y[r, 0] = 0 and each later element adds 1: Y[r, j] = j.
    expect = np.tile(np.arange(40, dtype=np.float32), (3, 1))
    np.testing.assert_array_equal(native["out0"], expect)
    np.testing.assert_array_equal(interp["out0"], expect)
    assert "#pragma omp simd" not in cpp


WINDOW = """
@kernel
def window(X: Tensor("P,W"), Wt: Tensor("S")) -> Tensor("P,Q"):
    Y = Tensor(P=X.shape[0], Q=X.shape[1] - Wt.shape[0] + 1)
    for p in Dim("P", parallel=True):
        for q in Dim("Q", parallel=True):
            for s in Dim("S"):
                Y[p, q] += X[p, q + s] * Wt[s]
    return Y


@kernel
def scale(X: Tensor("T")) -> Tensor("T"):
    Y = Tensor(T=X.shape[0])
    for t in Dim("T", parallel=True):
        Y[t] = exp(X[t]) * 0.5
    return Y


def model(
    x: Tensor("P,W", role="input"), w: Tensor("S", role="weight"), v: Tensor("T", role="input")
):
    return window(x, w), scale(v)
"""


def test_short_innermost_loop_and_parallel_blocks(tmp_path, monkeypatch):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 50)).astype(np.float32)
    w = np.array([1.0, -2.0, 0.5], np.float32)
    t = 1_200_000  # above the 2^20 points at which a nest runs under OpenMP
    v = rng.uniform(-1, 1, t).astype(np.float32)
    dims = {"P": 4, "W": 50, "S": 3, "T": t}
    native, interp, cpp = _run(tmp_path, monkeypatch, WINDOW, [x, w, v], dims)
    x64 = x.astype(np.float64)
    expect = x64[:, 0:48] * 1.0 - 2.0 * x64[:, 1:49] + 0.5 * x64[:, 2:50]
    _close(native["out0"], expect, "window native")
    _close(interp["out0"], expect, "window interpreter")
    _close(native["out1"], np.exp(v.astype(np.float64)) * 0.5, "scale native")
    # The window's q loop runs innermost over contiguous X and Y: Y[p, q] is updated by a
    # unit-stride access (`a<k> + i1`, q being loop 1).
    assert "+ i1]" in cpp
    assert "#pragma omp parallel for schedule(static) if(n0 >= 1048576)" in cpp


GEMMS = """
@kernel
def tt(A: Tensor("K,M"), B: Tensor("N,K")) -> Tensor("M,N"):
    C = Tensor(M=A.shape[1], N=B.shape[0])
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            for k in Dim("K"):
                C[m, n] += A[k, m] * B[n, k]
    return C


@kernel
def to_t(A: Tensor("M,K"), B: Tensor("K,N")) -> Tensor("N,M"):
    C = Tensor(N=B.shape[1], M=A.shape[0])
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            for k in Dim("K"):
                C[n, m] += A[m, k] * B[k, n]
    return C


@kernel
def causal(A: Tensor("G,M,K"), B: Tensor("G,K,N")) -> Tensor("G,M,N"):
    C = Tensor(G=A.shape[0], M=A.shape[1], N=B.shape[2])
    for g in Dim("G", parallel=True):
        for m in Dim("M", parallel=True):
            for n in Dim("N", parallel=True):
                for k in Dim("K"):
                    if k <= m:
                        C[g, m, n] += A[g, m, k] * B[g, k, n]
    return C


def model(
    a: Tensor("K,M", role="input"),
    b: Tensor("N,K", role="input"),
    a2: Tensor("M,K", role="input"),
    b2: Tensor("K,N", role="input"),
    a3: Tensor("G,M,L", role="input"),
    b3: Tensor("G,L,N", role="input"),
):
    return tt(a, b), to_t(a2, b2), causal(a3, b3)
"""


def test_gemms_in_place_transposed_and_guarded(tmp_path, monkeypatch):
    rng = np.random.default_rng(2)
    m, n, k, g = 19, 23, 17, 3
    f = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    a, b, a2, b2 = f(k, m), f(n, k), f(m, k), f(k, n)
    a3, b3 = f(g, m, m), f(g, m, n)  # the causal product has K = M
    dims = {"M": m, "N": n, "K": k, "G": g, "L": m}
    native, interp, cpp = _run(tmp_path, monkeypatch, GEMMS, [a, b, a2, b2, a3, b3], dims)
    d = lambda z: z.astype(np.float64)  # noqa: E731
    mask = np.tril(np.ones((m, m)))  # k <= m
    expect = [d(a).T @ d(b).T, (d(a2) @ d(b2)).T, (d(a3) * mask) @ d(b3)]
    for i, e in enumerate(expect):
        _close(native[f"out{i}"], e, f"out{i} native")
        _close(interp[f"out{i}"], e, f"out{i} interpreter")
    assert "CblasTrans, CblasTrans" in cpp  # A[k, m] and B[n, k] read in place
    assert cpp.count("(A in place, B in place, C in place)") == 2  # tt and the transposed target
    assert "(A packed, B in place, C in place)" in cpp  # the guard packs A, zeros above it


# The executor benchmark's convolution (bench/exec/conv2d.py), called at strides 1 and 2.
_BENCH_CONV = pathlib.Path(__file__).parents[2] / "bench" / "exec" / "conv2d.py"
CONV = (
    _BENCH_CONV.read_text()
    .replace("from solar.ir import Dim, Tensor, kernel\n", "")
    .replace("return conv2d(x, w, 1, 1)", "return conv2d(x, w, 1, 1), conv2d(x, w, 2, 1)")
)


def _conv_reference(x, w, stride, pad):
    n, c, h, wd = x.shape
    o, _, r, s = w.shape
    xp = np.zeros((n, c, h + 2 * pad, wd + 2 * pad))
    xp[:, :, pad : pad + h, pad : pad + wd] = x
    p = (h + 2 * pad - r) // stride + 1
    q = (wd + 2 * pad - s) // stride + 1
    y = np.zeros((n, o, p, q))
    for i in range(r):
        for j in range(s):
            patch = xp[:, :, i : i + stride * p : stride, j : j + stride * q : stride]
            y += np.einsum("ncpq,oc->nopq", patch, w[:, :, i, j])
    return y


def test_convolution_packs_per_image_and_writes_in_place(tmp_path, monkeypatch):
    rng = np.random.default_rng(3)
    # C*R*S = 288 by H*W = 4096 per image: a 1.2M-element packed operand, copied under OpenMP.
    x = rng.standard_normal((2, 32, 64, 64)).astype(np.float32)
    w = rng.standard_normal((8, 32, 3, 3)).astype(np.float32)
    dims = {"N": 2, "C": 32, "H": 64, "W": 64, "O": 8, "R": 3, "S": 3}
    native, interp, cpp = _run(tmp_path, monkeypatch, CONV, [x, w], dims)
    for i, stride in enumerate((1, 2)):
        e = _conv_reference(x.astype(np.float64), w.astype(np.float64), stride, 1)
        _close(native[f"out{i}"], e, f"stride {stride} native")
        _close(interp[f"out{i}"], e, f"stride {stride} interpreter")
    # Y[n] is an O x (P*Q) matrix: the image loop runs around the GEMMs, A (the weights) is
    # read in place and the packed image is written by narrowed loops, zeros outside.
    assert "(A in place, B packed, C in place)" in cpp
    assert "narrow(" in cpp


# The executor benchmark's depthwise convolution (bench/exec/depthwise_conv2d.py), called at
# strides 1 and 2: its padding guards bound loops outside the row they guard.
_BENCH_DEPTHWISE = pathlib.Path(__file__).parents[2] / "bench" / "exec" / "depthwise_conv2d.py"
HOISTED = (
    _BENCH_DEPTHWISE.read_text()
    .replace("from solar.ir import Dim, Tensor, kernel\n", "")
    .replace(
        "return depthwise_conv2d(x, w, 1, 1)",
        "return depthwise_conv2d(x, w, 1, 1), depthwise_conv2d(x, w, 2, 1), tri(x2), lower(x3)",
    )
    .replace(
        'w: Tensor("C,R,S", role="weight")',
        'w: Tensor("C,R,S", role="weight"), x2: Tensor("R2,L", role="input"), '
        'x3: Tensor("A,B", role="input")',
    )
    + """

@kernel
def tri(X: Tensor("R2,L")) -> Tensor("I"):
    S = Tensor(I=X.shape[0])
    for i in Dim("I", parallel=True):
        for r in Dim("R2"):
            for j in Dim("L"):
                if r <= i:
                    S[i] += X[r, j]
    return S


@kernel
def lower(X: Tensor("A,B")) -> Tensor("A,B"):
    Y = Tensor(A=X.shape[0], B=X.shape[1])
    for i in Dim("A"):
        for j in Dim("B"):
            if i >= 2 and j < i:
                Y[i, j] = X[i, j] + 1.0
    return Y
"""
)


def test_guards_bound_the_outer_loop_they_read(tmp_path, monkeypatch):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 9, 8)).astype(np.float32)
    w = rng.standard_normal((3, 3, 3)).astype(np.float32)
    x2 = rng.standard_normal((4, 5000)).astype(np.float32)  # rows over the 4096-point poll block
    x3 = rng.standard_normal((6, 5)).astype(np.float32)
    dims = {"N": 2, "C": 3, "H": 9, "W": 8, "R": 3, "S": 3, "R2": 4, "L": 5000, "A": 6, "B": 5}
    native, interp, cpp = _run(tmp_path, monkeypatch, HOISTED, [x, w, x2, x3], dims)
    d = x.astype(np.float64)
    for k, stride in enumerate((1, 2)):
        xp = np.pad(d, ((0, 0), (0, 0), (1, 1), (1, 1)))
        p, q = (9 + 2 - 3) // stride + 1, (8 + 2 - 3) // stride + 1  # 9 x 8, then 5 x 4
        y = np.zeros((2, 3, p, q))
        for r in range(3):
            for s in range(3):
                y += (
                    xp[:, :, r : r + stride * p : stride, s : s + stride * q : stride]
                    * w[None, :, r, s, None, None]
                )
        _close(native[f"out{k}"], y, f"depthwise stride {stride} native")
        _close(interp[f"out{k}"], y, f"depthwise stride {stride} interpreter")
    # S[i] sums rows 0..i: i = 0 is row 0 alone, i = 3 all four rows.
    rows = np.cumsum(x2.astype(np.float64).sum(axis=1))
    _close(native["out2"], rows, "tri native")
    # Y[i, j] = X[i, j] + 1 below the diagonal from row 2 on: 2 + 3 + 4 + 5 = 14 elements.
    expect = np.zeros((6, 5), np.float32)
    for i in range(2, 6):
        expect[i, :i] = x3[i, :i] + 1
    assert np.count_nonzero(expect) == 14
    np.testing.assert_array_equal(native["out3"], expect)
    np.testing.assert_array_equal(interp["out3"], expect)
    # The padding guard on p + r bounds the P loop (loop 2), evaluated once per tap row r;
    # r <= i bounds the R2 loop (loop 1) of `tri`; i >= 2 bounds `lower`'s row loop before it
    # starts (no OpenMP there). Its 5000-point rows keep the poll blocks; the others poll once
    # per row.
    assert "for (int64_t i2 = lo2_" in cpp
    assert "for (int64_t i1 = lo1_" in cpp
    assert "for (int64_t i0 = lo0_" in cpp
    assert "+= 4096)" in cpp


# With bounds checks (solar run, solar validate, the agent's validation), an access the
# generator proves in range from the loop bounds and the update's guard is not tested at run
# time, and a nest whose accesses are all proven takes the fast paths above.
CHECKED = {
    # A[m, k] and B[k, n] over the box: proven, the GEMM path.
    "matmul": """
@kernel
def mm(A: Tensor("M,K"), B: Tensor("K,N")) -> Tensor("M,N"):
    C = Tensor(M=A.shape[0], N=B.shape[1])
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            for k in Dim("K"):
                C[m, n] += A[m, k] * B[k, n]
    return C


def model(a: Tensor("M,K", role="input"), b: Tensor("K,N", role="input")):
    return mm(a, b)
""",
    # X[i + r - 1] is in [0, N) where both conjuncts of the padding guard hold: proven.
    "padded": """
@kernel
def conv1d(X: Tensor("N"), W: Tensor("R")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for i in Dim("N", parallel=True):
        for r in Dim("R"):
            if 0 <= i + r - 1 and i + r - 1 < size("N"):
                Y[i] += X[i + r - 1] * W[r]
    return Y


def model(x: Tensor("N", role="input"), w: Tensor("R", role="input")):
    return conv1d(x, w)
""",
    # X[2 * i] under i < N // 2: in range, but only with the fact doubled, which the proof
    # does not do: checked at run time.
    "scaled": """
@kernel
def evens(X: Tensor("N")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for i in Dim("N", parallel=True):
        if i < size("N") // 2:
            Y[i] = X[2 * i]
    return Y


def model(x: Tensor("N", role="input")):
    return evens(x)
""",
}


def test_bounds_checks_proven_when_generated(tmp_path, monkeypatch):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((7, 5)).astype(np.float32), rng.standard_normal((5, 3))
    x, w = rng.standard_normal(9).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    cases = {
        "matmul": ([a, b.astype(np.float32)], {"M": 7, "K": 5, "N": 3}),
        "padded": ([x, w], {"N": 9, "R": 3}),
        "scaled": ([x], {"N": 9}),
    }
    cpp, out = {}, {}
    for name, (inputs, dims) in cases.items():
        cache = tmp_path / name
        monkeypatch.setenv("SOLAR_CACHE_DIR", str(cache))
        path = tmp_path / f"{name}.py"
        path.write_text(HEADER + CHECKED[name])
        try:
            out[name] = solar.run(str(path), inputs, dims=dims, backend="native")
        except solar.UserError as err:
            if "compile" in str(err) or "compiler" in str(err):
                pytest.skip(f"native backend unavailable: {err}")
            raise
        cpp[name] = "\n".join(p.read_text() for p in sorted(cache.rglob("*.cpp")))
    # A failed check returns 1 from the kernel; none is generated where all are proven.
    assert "return 1;" not in cpp["matmul"] and "contraction: GEMMs" in cpp["matmul"]
    assert "return 1;" not in cpp["padded"] and "#pragma omp" in cpp["padded"]
    assert cpp["scaled"].count("return 1;") == 1  # X's index; Y[i] is proven
    _close(out["matmul"]["out0"], a.astype(np.float64) @ b.astype(np.float32), "matmul")
    xp = np.pad(x.astype(np.float64), 1)
    _close(out["padded"]["out0"], sum(xp[r : r + 9] * w[r] for r in range(3)), "padded")
    # Y[i] = X[2i] for i < 4 (9 // 2), 0 after.
    np.testing.assert_array_equal(out["scaled"]["out0"], np.r_[x[0:8:2], np.zeros(5, np.float32)])


# Before its first kernel loads OpenBLAS, the native backend names OpenBLAS's core from the
# CPU's features (OpenBLAS itself goes by the model number and falls back to a generic kernel
# on one it does not know); a core the user named is kept. Each case is a fresh process, in
# which nothing has loaded OpenBLAS yet.
CORE_PROBE = r"""
import ctypes, sys
import numpy as np
import solar
a = np.ones((8, 8), np.float32)
solar.run(sys.argv[1], [a, a], dims={"M": 8, "K": 8, "N": 8}, backend="native")
libc = ctypes.CDLL(None)
libc.getenv.restype = ctypes.c_char_p
blas = ctypes.CDLL("libopenblas.so.0", mode=ctypes.RTLD_GLOBAL)
blas.openblas_get_corename.restype = ctypes.c_char_p
print(libc.getenv(b"OPENBLAS_CORETYPE").decode(), blas.openblas_get_corename().decode())
"""


def test_openblas_core_follows_the_cpu_features(tmp_path):
    import os
    import subprocess
    import sys

    flags = set()
    for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            break
    avx512 = {"avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512cd"}
    if avx512 <= flags:
        expect = "SkylakeX"
    elif {"avx2", "fma"} <= flags:
        expect = "Haswell"
    elif "avx" in flags:
        expect = "Sandybridge"
    else:
        pytest.skip("a CPU without AVX: OpenBLAS chooses its own core")
    prog = tmp_path / "mm.py"
    prog.write_text(HEADER + CHECKED["matmul"])
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    env["SOLAR_CACHE_DIR"] = str(tmp_path / "kernels")

    def probe(**extra):
        r = subprocess.run(
            [sys.executable, "-c", CORE_PROBE, str(prog)],
            env={**env, **extra},
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0, r.stderr
        return r.stdout.split()

    assert probe() == [expect, expect]
    assert probe(OPENBLAS_CORETYPE="Sandybridge") == ["Sandybridge", "Sandybridge"]
