"""Where Solar's bound and NVIDIA's SOL-ExecBench `sol_ms` differ by more than 2x (issue 42,
item 8): three kinds of difference, each on a definition written here with the shapes of one
published workload (tests never read the benchmark), its bound derived by hand and set beside
NVIDIA's published number. `bench/execbench_margins.py` lists every such workload; the
closing note of issue 42 names the kinds.

- Traffic NVIDIA's time cannot carry (task 8, `008_expert_output_weighted_index_add_acc`,
  workload 2c1d8396): Solar 4.26x above NVIDIA. Any kernel must read the expert outputs.
- The matrix format the tolerance admits (task 30,
  `030_attention_output_projection_with_residual`, workload 73a42d0a): Solar 0.40x NVIDIA.
  The workload's tolerance admits fp8 operands; NVIDIA prices the bf16 rate.
- A floor in NVIDIA's times (task 84, `084_silu_activation_backward`, workload 906b1fa4):
  Solar 0.20x NVIDIA. NVIDIA's smallest workloads all read 0.0004 ms; Solar's bound counts no
  launch latency (docs/sol-modes.md).

B200 (configs/arch/B200.yaml): DRAM 8.0e12 B/s, fp8 matrix rate 4.5e15 FLOP/s.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from solar import cli

DRAM = 8.0e12  # configs/arch/B200.yaml dram.bytes_per_second
FP8 = 4.5e15  # configs/arch/B200.yaml matrix_flops_per_second.fp8


def analysed(tmp_path: Path, definition: dict, axes: dict, tolerance: dict) -> dict:
    """`solar analyze definition.json --workload w --arch B200 --no-validate --json`, as a
    user runs it on the benchmark: the solar.analysis/1 document."""
    folder = tmp_path / definition["name"]
    folder.mkdir()
    (folder / "definition.json").write_text(json.dumps(definition))
    inputs = {name: {"type": "random"} for name in definition["inputs"]}
    line = {"uuid": "w", "axes": axes, "inputs": inputs, "tolerance": tolerance}
    (folder / "workload.jsonl").write_text(json.dumps(line) + "\n")
    out = tmp_path / "out.json"
    argv = ["analyze", str(folder / "definition.json"), "--workload", "w", "--arch", "B200"]
    assert cli.main([*argv, "--no-validate", "--json", str(out)]) == 0
    return json.loads(out.read_text())


def test_index_add_reads_what_nvidias_time_cannot_carry(tmp_path):
    # output = final.clone(); output.index_add_(0, idx, src): final [2048, 3072] bf16, src
    # [16384, 3072] bf16 (8 experts per token), idx [16384] int64, output [2048, 3072] bf16.
    # Bytes: 12,582,912 + 100,663,296 + 131,072 read, 12,582,912 written = 125,960,192;
    # / 8e12 = 15.745 us. NVIDIA's 0.0037 ms carries 29.6 MB at 8 TB/s: less than `src`
    # alone, which every correct kernel reads (each of its values reaches the output).
    d = {
        "name": "index_add_accumulate",
        "axes": {
            "batch_size": {"type": "var"},
            "seq_len": {"type": "var"},
            "hidden_size": {"type": "const", "value": 3072},
            "k": {"type": "const", "value": 8},
            "tokens": {"type": "expr", "expression": "batch_size * seq_len"},
            "selected": {"type": "expr", "expression": "batch_size * seq_len * k"},
        },
        "inputs": {
            "final": {"shape": ["tokens", "hidden_size"], "dtype": "bfloat16"},
            "src": {"shape": ["selected", "hidden_size"], "dtype": "bfloat16"},
            "idx": {"shape": ["selected"], "dtype": "int64"},
        },
        "outputs": {"output": {"shape": ["tokens", "hidden_size"], "dtype": "bfloat16"}},
        "reference": (
            "import torch\n\n"
            "def run(final, src, idx):\n"
            "    output = final.clone()\n"
            "    output.index_add_(0, idx, src)\n"
            "    return output\n"
        ),
    }
    doc = analysed(tmp_path, d, {"batch_size": 2, "seq_len": 1024}, {"max_atol": 0.093})
    fused = doc["totals"]["bytes"]["fused"]
    assert fused == 12_582_912 + 100_663_296 + 131_072 + 12_582_912
    assert doc["totals"]["seconds"]["fused"] == pytest.approx(125_960_192 / DRAM, rel=1e-9)
    nvidia = 0.0037e-3  # metadata.json sol_ms of task 8, workload 0
    assert nvidia * DRAM < 100_663_296
    assert doc["totals"]["seconds"]["fused"] / nvidia == pytest.approx(4.26, abs=0.01)


def test_linear_with_residual_at_the_fp8_rate_its_tolerance_admits(tmp_path):
    # x @ w.T + residual: x, residual [16, 512, 2560] bf16, w [2560, 2560] bf16. MACs 8192 *
    # 2560 * 2560 = 53,687,091,200. Tolerance atol 0.02, rtol 0.05: fp8 operands (e4m3, RMS
    # rounding sqrt(2/3) * 2^-4 = 0.051) are within it (docs/sol-modes.md, the accuracy
    # contract), so 2 * MACs / 4.5e15 = 23.861 us; the bytes, 2 * 41,943,040 + 13,107,200 read
    # and 41,943,040 written = 138,936,320, take 17.4 us: compute-bound. NVIDIA's 0.0597 ms is
    # the same FLOPs at 1.8 PFLOP/s, a bf16-class rate: the ratio 0.40 is that of the rates.
    d = {
        "name": "projection_with_residual",
        "axes": {
            "batch_size": {"type": "var"},
            "seq_len": {"type": "var"},
            "hidden_size": {"type": "const", "value": 2560},
        },
        "inputs": {
            "x": {"shape": ["batch_size", "seq_len", "hidden_size"], "dtype": "bfloat16"},
            "residual": {"shape": ["batch_size", "seq_len", "hidden_size"], "dtype": "bfloat16"},
            "w": {"shape": ["hidden_size", "hidden_size"], "dtype": "bfloat16"},
        },
        "outputs": {
            "output": {"shape": ["batch_size", "seq_len", "hidden_size"], "dtype": "bfloat16"}
        },
        "reference": (
            "import torch\n\n"
            "def run(x, residual, w):\n"
            "    return torch.matmul(x, w.t()) + residual\n"
        ),
    }
    doc = analysed(
        tmp_path, d, {"batch_size": 16, "seq_len": 512}, {"max_atol": 0.02, "max_rtol": 0.05}
    )
    assert doc["totals"]["macs"] == 53_687_091_200
    assert doc["totals"]["bytes"]["fused"] == 138_936_320
    assert doc["totals"]["bottleneck"]["fused"] == "compute"
    bound = doc["totals"]["seconds"]["fused"]
    assert bound == pytest.approx(2 * 53_687_091_200 / FP8, rel=1e-6)
    nvidia = 0.0597e-3  # metadata.json sol_ms of task 30, workload 0
    assert 2 * 53_687_091_200 / nvidia == pytest.approx(1.8e15, rel=0.01)
    assert bound / nvidia == pytest.approx(0.40, abs=0.01)


def test_silu_backward_under_nvidias_floor(tmp_path):
    # grad_output * s * (1 + x * (1 - s)): three fp32 inputs of 40,960 elements read
    # (491,520 B) and one written (163,840 B): 655,360 B / 8e12 = 81.92 ns; 5 vector FLOPs per
    # element (1 - s, x *, 1 +, s *, grad *) = 204,800 at 80 TFLOP/s, 2.56 ns: memory-bound.
    # NVIDIA's 0.0004 ms is the value of all its smallest workloads.
    d = {
        "name": "silu_backward",
        "axes": {"n": {"type": "var"}},
        "inputs": {
            "grad_output": {"shape": ["n"], "dtype": "float32"},
            "x": {"shape": ["n"], "dtype": "float32"},
            "sigmoid_x": {"shape": ["n"], "dtype": "float32"},
        },
        "outputs": {"grad_input": {"shape": ["n"], "dtype": "float32"}},
        "reference": (
            "import torch\n\n"
            "def run(grad_output, x, sigmoid_x):\n"
            "    return grad_output * (sigmoid_x * (1.0 + x * (1.0 - sigmoid_x)))\n"
        ),
    }
    doc = analysed(tmp_path, d, {"n": 40_960}, {"max_atol": 1e-5, "max_rtol": 1e-5})
    assert doc["totals"]["bytes"]["fused"] == 655_360
    assert doc["totals"]["vector_flops"] == 204_800
    bound = doc["totals"]["seconds"]["fused"]
    assert bound == pytest.approx(655_360 / DRAM, rel=1e-9)
    nvidia = 0.0004e-3  # metadata.json sol_ms of task 84, workload 0
    assert bound / nvidia == pytest.approx(0.2048, rel=1e-6)
