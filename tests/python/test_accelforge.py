"""Cross-check of the cache-aware tiling search against AccelForge (its Orojenesis flow: a
DRAM + one global buffer architecture, the mapper minimising DRAM accesses at a given buffer
size) on matmul, bmm and conv2d at several capacities (docs/sol-modes.md, "Cross-check with
AccelForge").

Expected: at a capacity that holds every tensor whole, both give the compulsory traffic
(each tensor once; computed by hand below). Below it, AccelForge's mapspace is larger than
Solar's (each tensor may be kept at its own loop level; Solar tiles all tensors at one
level), so AccelForge's minimum is at most Solar's; the test checks that order and prints
the ratio. AccelForge needs Python >= 3.12 (this venv is 3.11): it runs in a subprocess under
$SOLAR_ACCELFORGE_PYTHON (`make accelforge-check` builds such a venv when python3.12 exists);
without one the module is skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import solar
from solar import _core

BITS = 32  # fp32 on both sides
SCRIPT = Path(__file__).parent / "accelforge_bytes.py"


def _accelforge_python() -> str:
    """An interpreter that imports accelforge: $SOLAR_ACCELFORGE_PYTHON, else this one."""
    exe = os.environ.get("SOLAR_ACCELFORGE_PYTHON", sys.executable)
    if os.sep in exe:  # the subprocesses run in a temporary directory
        exe = os.path.abspath(exe)
    probe = subprocess.run([exe, "-c", "import accelforge"], capture_output=True, text=True)
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["?"])[-1]
        pytest.skip(
            f"accelforge not importable by {exe} ({last}); it needs Python >= 3.12: set "
            "SOLAR_ACCELFORGE_PYTHON to such an interpreter with accelforge installed "
            "(`make accelforge-check` does it)",
            allow_module_level=True,
        )
    if shutil.which("dot") is None:
        pytest.skip("accelforge renders its mapping with Graphviz: `dot` is not on PATH",
                    allow_module_level=True)  # fmt: skip
    return exe


AF_PYTHON = _accelforge_python()


def solar_bytes(tmp_path, name: str, source: str, capacity: int) -> int:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return _core.cache_schedule_bytes(solar.trace(path), float(capacity))


def accelforge_bytes(tmp_path, name: str, workload: str, capacities) -> dict[int, float]:
    """AccelForge's minimum DRAM bytes at each capacity (one subprocess for all of them)."""
    path = tmp_path / f"{name}.workload.yaml"
    path.write_text(textwrap.dedent(workload))
    r = subprocess.run(
        [AF_PYTHON, str(SCRIPT), str(path), *map(str, capacities)],
        capture_output=True, text=True, cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    rows = [ln.split() for ln in r.stdout.splitlines() if ln.startswith("bytes ")]
    assert len(rows) == len(capacities), r.stdout[-2000:]
    return {int(c): float(b) for _, c, b in rows}


MATMUL_IR = """
from solar.ir import kernel, Tensor, Dim

@kernel
def mm(A: Tensor("M,K"), B: Tensor("K,N")) -> Tensor("M,N"):
    Z = Tensor(M=A.shape[0], N=B.shape[1])
    for m in Dim("M"):
        for n in Dim("N"):
            for k in Dim("K"):
                Z[m, n] += A[m, k] * B[k, n]
    return Z

DIMS = {{"M": {M}, "K": {K}, "N": {N}}}

def model(a: Tensor("M,K", role="input"), b: Tensor("K,N", role="weight")):
    return mm(a, b)
"""

MATMUL_AF = """
workload:
  rank_sizes: {{M: {M}, K: {K}, N: {N}}}
  bits_per_value: {{All: 32}}
  einsums:
  - name: Matmul
    tensor_accesses:
    - {{name: A, projection: [m, k]}}
    - {{name: B, projection: [k, n]}}
    - {{name: Z, projection: [m, n], output: true}}
"""

BMM_IR = """
from solar.ir import kernel, Tensor, Dim

@kernel
def bmm(A: Tensor("B,M,K"), C: Tensor("B,K,N")) -> Tensor("B,M,N"):
    Z = Tensor(B=A.shape[0], M=A.shape[1], N=C.shape[2])
    for b in Dim("B"):
        for m in Dim("M"):
            for n in Dim("N"):
                for k in Dim("K"):
                    Z[b, m, n] += A[b, m, k] * C[b, k, n]
    return Z

DIMS = {{"B": {B}, "M": {M}, "K": {K}, "N": {N}}}

def model(a: Tensor("B,M,K", role="input"), c: Tensor("B,K,N", role="input")):
    return bmm(a, c)
"""

BMM_AF = """
workload:
  rank_sizes: {{B: {B}, M: {M}, K: {K}, N: {N}}}
  bits_per_value: {{All: 32}}
  einsums:
  - name: Bmm
    tensor_accesses:
    - {{name: A, projection: [b, m, k]}}
    - {{name: C, projection: [b, k, n]}}
    - {{name: Z, projection: [b, m, n], output: true}}
"""

# A valid (unpadded) stride-1 convolution: H = P + R - 1, W = Q + S - 1.
CONV_IR = """
from solar.ir import kernel, Tensor, Dim

@kernel
def conv(X: Tensor("N,C,H,W"), Wt: Tensor("O,C,R,S")) -> Tensor("N,O,P,Q"):
    Y = Tensor(N=X.shape[0], O=Wt.shape[0], P=X.shape[2] - Wt.shape[2] + 1,
               Q=X.shape[3] - Wt.shape[3] + 1)
    for n in Dim("N"):
        for o in Dim("O"):
            for p in Dim("P"):
                for q in Dim("Q"):
                    for c in Dim("C"):
                        for r in Dim("R"):
                            for s in Dim("S"):
                                Y[n, o, p, q] += X[n, c, p + r, q + s] * Wt[o, c, r, s]
    return Y

DIMS = {{"N": {N}, "C": {C}, "H": {H}, "W": {W}, "O": {O}, "R": {R}, "S": {S}}}

def model(x: Tensor("N,C,H,W", role="input"), w: Tensor("O,C,R,S", role="weight")):
    return conv(x, w)
"""

CONV_AF = """
workload:
  rank_sizes: {{N: {N}, C: {C}, H: {H}, W: {W}, O: {O}, R: {R}, S: {S}, P: {P}, Q: {Q}}}
  bits_per_value: {{All: 32}}
  einsums:
  - name: Conv
    tensor_accesses:
    - name: X
      projection: {{N: n, C: c, H: p + r, W: q + s}}
    - {{name: Wt, projection: [o, c, r, s]}}
    - {{name: Y, projection: [n, o, p, q], output: true}}
"""


def _cases():
    # (name, Solar IR, AccelForge workload, sizes, compulsory bytes by hand)
    mm = {"M": 32, "K": 32, "N": 32}  # A, B, Z: 3 * 32*32 * 4 B = 12,288 B
    mm2 = {"M": 64, "K": 16, "N": 32}  # 4 * (64*16 + 16*32 + 64*32) = 14,336 B
    bmm = {"B": 4, "M": 16, "K": 16, "N": 16}  # 3 * 4*16*16 * 4 B = 12,288 B
    conv = {"N": 1, "C": 8, "H": 10, "W": 10, "O": 8, "R": 3, "S": 3, "P": 8, "Q": 8}
    # conv: X 8*10*10 = 800, Wt 8*8*3*3 = 576, Y 8*8*8 = 512 -> 1,888 * 4 B = 7,552 B
    return [
        ("matmul32", MATMUL_IR, MATMUL_AF, mm, 12_288),
        ("matmul64x16x32", MATMUL_IR, MATMUL_AF, mm2, 14_336),
        ("bmm", BMM_IR, BMM_AF, bmm, 12_288),
        ("conv", CONV_IR, CONV_AF, conv, 7_552),
    ]


# 1/16, 1/4 and 1/2 of the working set, the working set itself and 4 times it.
FRACTIONS = ((1, 16), (1, 4), (1, 2), (1, 1), (4, 1))


@pytest.fixture(scope="module")
def accelforge_results(tmp_path_factory):
    """AccelForge's minimum per case and capacity, mapped once for both tests."""
    tmp = tmp_path_factory.mktemp("accelforge")
    out = {}
    for name, _, workload, sizes, compulsory in _cases():
        caps = [compulsory * a // b for a, b in FRACTIONS]
        out[name] = accelforge_bytes(tmp, name, workload.format(**sizes), caps)
    return out


@pytest.mark.parametrize("name,ir,workload,sizes,compulsory", _cases())
def test_same_minimum_when_everything_fits(
    tmp_path, accelforge_results, name, ir, workload, sizes, compulsory
):
    # Capacities at and above the working set: both move each tensor exactly once.
    for capacity in (compulsory, 4 * compulsory):
        ours = solar_bytes(tmp_path, name, ir.format(**sizes), capacity)
        theirs = accelforge_results[name][capacity]
        assert ours == compulsory, (name, capacity)
        assert theirs == pytest.approx(compulsory), (name, capacity)


@pytest.mark.parametrize("name,ir,workload,sizes,compulsory", _cases())
def test_accelforge_never_above_solar_below_the_working_set(
    tmp_path, accelforge_results, name, ir, workload, sizes, compulsory
):
    # 1/16, 1/4 and 1/2 of the working set: AccelForge's larger mapspace can only do better.
    for capacity in (compulsory // 16, compulsory // 4, compulsory // 2):
        ours = solar_bytes(tmp_path, name, ir.format(**sizes), capacity)
        theirs = accelforge_results[name][capacity]
        print(
            f"{name} @ {capacity} B: solar {ours} B, accelforge {theirs:.0f} B, "
            f"ratio {ours / theirs:.3f}"
        )
        assert compulsory <= theirs <= ours * (1 + 1e-9), (name, capacity)


@pytest.mark.parametrize("name,ir,workload,sizes,compulsory", _cases())
def test_the_bound_is_never_above_accelforge(
    tmp_path, accelforge_results, name, ir, workload, sizes, compulsory
):
    # The cache-aware bound holds for every schedule that fits, so also for the mapping
    # AccelForge finds at each capacity (1/16 to 4 times the working set): bound <= its
    # minimum. Every graph tensor here is an input or the output, so the graph bound uses all.
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(ir.format(**sizes)))
    graph = solar.trace(path)
    for capacity, theirs in accelforge_results[name].items():
        bound = _core.cache_aware_bound_bytes(graph, float(capacity))
        print(f"{name} @ {capacity} B: bound {bound} B, accelforge {theirs:.0f} B")
        assert compulsory <= bound <= theirs * (1 + 1e-9), (name, capacity)
