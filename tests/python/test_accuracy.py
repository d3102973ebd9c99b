"""The accuracy contract (docs/sol-modes.md, "The accuracy contract"; solar/accuracy.py and
src/sol/analysis.cpp contract_rate): each fp32 contraction is priced at the fastest matrix
format whose operand rounding, sqrt(2/3) u, is within the allowed relative error atol + rtol,
or that holds the operands exactly (bf16x9 for fp32, at a ninth of the bf16 rate)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from solar import _core, accuracy, load_arch
from solar.errors import UserError
from solar.session import analyze_graph

ROOT = Path(__file__).resolve().parents[2]

# One fp32 matmul of 64 x 64 x 64: 262,144 MACs, 524,288 FLOP.
MATMUL = """from solar.ir import kernel, Tensor, Dim

@kernel
def matmul(A: Tensor("M,K"), B: Tensor("K,N")) -> Tensor("M,N"):
    C = Tensor(M=A.shape[0], N=B.shape[1])
    for m in Dim("M", parallel=True):
        for n in Dim("N"):
            for k in Dim("K"):
                C[m, n] += A[m, k] * B[k, n]
    return C

DIMS = {"M": 64, "K": 64, "N": 64}

def model(a: Tensor("M,K", role="input"), b: Tensor("K,N", role="input")):
    return matmul(a, b)
"""

# Rates 1 PFLOP/s apart by format so the chosen one is read off the time; DRAM fast enough
# that compute bounds every case (49,152 B / 1e18 B/s).
SPEC = """name: contract
sparsity: dense
clock: boost
fp32_matrix_mode: fp32
matrix_flops_per_second:
  fp8: {value: 8.0e15, source: "a test spec", accumulate: fp32}
  bf16: {value: 4.0e15, source: "a test spec", accumulate: fp32}
  tf32: {value: 2.0e15, source: "a test spec"}
vector_flops_per_second:
  fp32: {value: 1.0e14, source: "a test spec"}
dram:
  bytes_per_second: {value: 1.0e18, source: "a test spec"}
"""
FLOP = 2 * 64**3


@pytest.fixture(scope="module")
def graph_and_spec(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("contract")
    (tmp / "spec.yaml").write_text(SPEC)
    program = _core.load_program_source(MATMUL, "matmul.py")
    return _core.trace(program, []), load_arch(str(tmp / "spec.yaml"))


@pytest.mark.parametrize(
    ("tolerance", "mode", "rate"),
    [
        # atol = rtol = 0.05: allowed 0.1 >= sqrt(2/3) 2^-4 = 0.051 (fp8 e4m3): fp8, 8e15.
        ("0.05", "fp8", 8.0e15),
        # KernelBench's 1e-2: allowed 0.02; fp8's 0.051 is over, bf16's sqrt(2/3) 2^-8 =
        # 0.0032 within: bf16, 4e15.
        ("0.01", "bf16", 4.0e15),
        # SOL-ExecBench task 37's atol 0.0024, rtol 1e-5: allowed 0.00241 < 0.0032 (bf16);
        # tf32's sqrt(2/3) 2^-11 = 0.00040 within: tf32, 2e15.
        ("atol=0.0024,rtol=1e-5", "tf32", 2.0e15),
        # 1e-5 each: allowed 2e-5; tf32 over, bf16x3's sqrt(2/3) 2^-16 = 1.25e-5 within:
        # three bf16 products per product, 4e15 / 3.
        ("1e-5", "bf16x3", 4.0e15 / 3),
        # exact: only a format holding fp32 operands: bf16x9, 4e15 / 9 = 4.4e14 > the fp32
        # vector rate 1e14.
        ("exact", "bf16x9", 4.0e15 / 9),
    ],
)
def test_each_tolerance_prices_the_fastest_format_that_meets_it(
    graph_and_spec, tolerance, mode, rate
):
    graph, spec = graph_and_spec
    a = analyze_graph(graph, spec, accuracy.parse(tolerance))
    assert [g.mode for g in a.math_modes] == [mode]
    assert a.fused.seconds == pytest.approx(FLOP / rate)


def test_without_a_contract_the_program_mode_stands(graph_and_spec):
    graph, spec = graph_and_spec
    # framework: no contract; the spec's fp32_matrix_mode fp32 without an fp32 matrix rate:
    # the vector rate, 524,288 / 1e14 = 5.24 ns.
    a = analyze_graph(graph, spec, accuracy.parse("framework"))
    assert [g.mode for g in a.math_modes] == ["fp32"]
    assert a.fused.seconds == pytest.approx(FLOP / 1.0e14)
    # --fp32-math overrides the contract for fp32 nodes: tf32 at 2e15 though 0.05 allows fp8.
    a = analyze_graph(graph, spec, accuracy.parse("0.05", fp32_math="tf32"))
    assert [(g.mode, g.reason) for g in a.math_modes] == [("tf32", "--fp32-math tf32")]


def test_the_reason_names_the_rounding_and_the_contract(graph_and_spec):
    graph, spec = graph_and_spec
    a = analyze_graph(graph, spec, accuracy.parse("0.01"))
    assert a.math_modes[0].reason == "operand rounding 0.0032 within the accuracy contract 0.02"


def test_bad_accuracy_values_are_one_line_errors():
    with pytest.raises(UserError) as e:
        accuracy.parse("tight")
    assert "--accuracy: tolerance 'tight' is not a tolerance" in str(e.value)
    with pytest.raises(UserError) as e:
        accuracy.parse("atol=-1,rtol=0.1")
    assert "--accuracy: atol '-1' is not a tolerance" in str(e.value)


def test_workload_tolerance_and_program_defaults():
    p = accuracy.workload_policy({"max_atol": 0.0024, "max_rtol": 1e-05})
    assert p.accuracy == pytest.approx(0.00241)
    assert "the workload's tolerance" in p.source
    # No tolerance (FlashInfer-Bench workloads): KernelBench's 1e-2 + 1e-2.
    assert accuracy.workload_policy({}).accuracy == pytest.approx(0.02)
    assert accuracy.default_policy("pytorch").accuracy == pytest.approx(0.02)
    assert accuracy.default_policy("ir").accuracy == 0.0


def test_cli_prices_a_pytorch_matmul_at_bf16_by_default(tmp_path):
    # workloads/level1/matmul_square.py on H100_PCIe (fp32 inputs, PyTorch's "highest"
    # precision): under KernelBench's 1e-2 the matmul is priced at bf16, not fp32.
    out = tmp_path / "out.json"
    problem = ROOT / "workloads/level1/matmul_square.py"
    args = ["analyze", str(problem), "--arch", "H100_PCIe", "--no-validate", "--json", str(out)]
    r = subprocess.run(
        [sys.executable, "-m", "solar.cli", *args], capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0, r.stderr
    assert "accuracy contract: atol 0.01, rtol 0.01 (KernelBench's convention" in r.stdout
    assert json.loads(out.read_text())["math_mode"].startswith("bf16 (operand rounding 0.0032")


def test_the_binding_refuses_a_negative_or_infinite_accuracy(graph_and_spec):
    graph, spec = graph_and_spec
    for bad in (-1.0, float("inf")):
        with pytest.raises(UserError) as e:
            _core.analyze(graph, spec, "default", True, None, bad)
        assert "--accuracy must be a finite relative error of 0 or more" in str(e.value)
