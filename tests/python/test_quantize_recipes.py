"""Quantisation recipes (`--quantize`, `quantize=`; src/sol/quantize.cpp, docs/sol-modes.md
"Quantisation recipes") on PyTorch programs. The recipe prices the contractions that read a
weight; the program itself is validated as written.

Numbers, on B200 (configs/arch/B200.yaml): fp4 matrix rate 9.0e15 FLOP/s ("FP4 Tensor Core
18 PFLOPS with sparsity / 2"), bf16 2.25e15.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import solar
import torch
from test_llm import decode_bytes_by_hand, small_llama

FP4_FLOPS_PER_SECOND = 9.0e15  # configs/arch/B200.yaml matrix_flops_per_second.fp4


def linear_bf16():
    torch.manual_seed(0)
    return torch.nn.Linear(256, 512, bias=False).to(torch.bfloat16)


def test_a_w4a4_linear_reads_four_bit_codes_and_multiplies_at_the_fp4_rate():
    x = torch.randn(8, 256, dtype=torch.bfloat16)
    result = solar.analyze(linear_bf16(), [x], arch="B200", quantize="w4a4")
    a = result.analyses[0]
    # The program as written validates (the recipe prices it; it does not change it).
    assert result.validation.status == "full"
    q = a.quantization
    assert q.recipe == "w4a4" and len(q.changes) == 1 and not q.skipped
    # Weight [512, 256] = 131,072 elements: 65,536 B of e2m1 codes and 131,072 / 16 = 8,192
    # e4m3 scales of 1 B, against 262,144 B in bf16.
    assert (q.weight_bytes_before, q.weight_bytes_after) == (262144, 65536 + 8192)
    # x is a graph input: the GEMM's prologue quantises it as it reads it (4,096 B of bf16).
    assert q.changes[0].prologue
    # Fused bytes: x 4,096 + weight 73,728 + output [8, 512] bf16 8,192 = 86,016.
    assert a.fused.bytes == 86016
    # MACs 8 x 512 x 256 = 1,048,576 at fp4: 2 x 1,048,576 / 9e15 s.
    assert a.math_mode == "fp4 (--quantize w4a4)"
    assert a.fused.matrix_seconds == pytest.approx(2 * 1048576 / FP4_FLOPS_PER_SECOND)
    # The quantiser's work on x's 2,048 elements (a max, a multiply and a rounding each) and
    # one division per scale (8 rows x 256 / 16 = 128): 3 x 2,048 + 128 = 6,272 vector FLOPs.
    assert a.fused.vector_flops == 6272


def test_an_int4_group_quantised_weight_only_linear_keeps_bf16_macs():
    x = torch.randn(8, 256, dtype=torch.bfloat16)
    a = solar.analyze(linear_bf16(), [x], arch="B200", quantize="w4a16:g64").analyses[0]
    q = a.quantization
    assert q.weights == "int4, one fp16 scale per 64 of K"
    # Codes 131,072 x 4 bits = 65,536 B; 512 rows x 256/64 = 2,048 fp16 scales = 4,096 B.
    assert q.weight_bytes_after == 65536 + 4096
    assert q.changes[0].matrix_after == "bf16"
    # Fused: x 4,096 + 69,632 + output 8,192 = 81,920.
    assert a.fused.bytes == 81920
    # Each code converted once (131,072) and the scales applied to each output's K-group
    # partial sums: 1,048,576 MACs / 64 = 16,384 multiplies (fewer than 131,072).
    assert a.fused.vector_flops == 131072 + 16384


PROGRAM = """
import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(64, 128, bias=False)
        self.down = torch.nn.Linear(128, 64, bias=False)

    def forward(self, x):
        h = torch.relu(self.up(x))
        return x + self.down(h), h @ h.T


def get_inputs():
    return [torch.randn(4, 64)]


def get_init_inputs():
    return []
"""


def test_the_cli_lists_what_the_recipe_changed(tmp_path):
    f = tmp_path / "mlp.py"
    f.write_text(PROGRAM)
    out = tmp_path / "a.json"
    cmd = [sys.executable, "-m", "solar.cli", "analyze", str(f), "--arch", "B200", "--no-validate"]
    run = subprocess.run(
        [*cmd, "--quantize", "fp8", "--json", str(out), "--html", str(tmp_path / "a.html")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    text = run.stdout
    assert "quantize fp8: 2 of 3 contraction nodes" in text
    # h is read by the down projection and by h @ h.T, which stays as written: the down
    # projection's prologue quantises it.
    assert "its prologue quantises it" in text
    assert "left as written: " in text and "no operand is a weight" in text
    # The HTML report says the same.
    assert "quantize fp8: 2 of 3 contraction nodes" in (tmp_path / "a.html").read_text()
    doc = json.loads(out.read_text())
    q = doc["quantization"]
    assert q["recipe"] == "fp8" and len(q["nodes"]) == 2 and len(q["skipped"]) == 1
    # The weights: 128 x 64 x 2 elements at 1 B, plus one fp32 scale per output channel
    # (128 + 64) = 16,384 + 768 B; in fp32, 65,536 B.
    assert (q["weight_bytes_before"], q["weight_bytes_after"]) == (65536, 16384 + 768)
    # The nodes of the JSON are the quantised graph's: the up projection reads x (fp32,
    # 4 x 64 x 4 = 1,024 B, quantised in its prologue), its 8,192 B of codes and 512 B of
    # scales.
    up = next(n for n in doc["nodes"] if n["name"] == q["nodes"][0]["node"])
    assert up["bytes_read"] == 1024 + 8192 + 512


def test_an_unknown_recipe_is_an_error_naming_the_recipes(tmp_path):
    f = tmp_path / "mlp.py"
    f.write_text(PROGRAM)
    run = subprocess.run(
        [sys.executable, "-m", "solar.cli", "analyze", str(f), "--quantize", "int3"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode != 0
    assert "error[argument]: unknown quantisation recipe 'int3'" in run.stderr
    assert "w4a16 (int4 weights" in run.stderr


# One decode step of the small Llama of tests/python/test_llm.py (grouped-query attention, 2
# layers of width 64, fp32), batch 2, 32 tokens of context: 363,312 fused bytes, derived there
# (weights, the cache, ids and logits).
DECODE_BYTES = decode_bytes_by_hand(2, 32)
CACHE_BYTES = 2 * 2 * 2 * 2 * 32 * 16 * 4  # layers x (keys, values) x [2, 2, 32, 16] fp32


def test_a_decode_step_with_an_fp8_kv_cache_reads_the_cache_as_fp8():
    from solar.llm import analyze_llm

    r = analyze_llm(small_llama(), "decode", batch=2, context=32, arch="B200", kv_cache="fp8")
    a = r.result.analysis
    assert r.result.validation.status == "full"
    q = a.quantization
    # Four cache inputs (2 layers x keys, values), 32,768 B as fp32, 8,192 B as e4m3 codes
    # (one fp32 scale per tensor, not counted).
    assert len(q.kv_inputs) == 4
    assert (q.kv_bytes_before, q.kv_bytes_after) == (CACHE_BYTES, CACHE_BYTES // 4)
    assert a.fused.bytes == DECODE_BYTES - CACHE_BYTES + CACHE_BYTES // 4  # 338,736
    # The attention's 4 products (QK^T and PV per layer) multiply fp8 codes.
    fp8 = [m for m in a.math_modes if m.reason == "--kv-cache fp8"]
    assert len(fp8) == 1 and fp8[0].mode == "fp8" and fp8[0].nodes == 4


def test_a_w4a16_decode_step_reads_int4_weights():
    from solar.llm import analyze_llm

    r = analyze_llm(small_llama(), "decode", batch=2, context=32, arch="B200", quantize="w4a16")
    q = r.result.analysis.quantization
    # The 15 linear layers (7 per layer, and the LM head): 81,920 fp32 values, 327,680 B; as
    # int4 40,960 B plus one fp16 scale per row (every K here, 64 or 128, is at most one group
    # of 128): 2 x (64 + 32 + 32 + 64 + 128 + 128 + 64) + 128 = 1,152 scales, 2,304 B.
    assert len(q.changes) == 15
    assert (q.weight_bytes_before, q.weight_bytes_after) == (327_680, 40_960 + 2_304)
    assert r.result.analysis.fused.bytes == DECODE_BYTES - 327_680 + 43_264  # 78,896


def test_inverse_prices_a_pytorch_program_as_analyze_does(tmp_path):
    # solar inverse takes analyze's accuracy contract (KernelBench's 1e-2 for a PyTorch
    # program: its fp32 products at bf16 on B200) and the recipe, and says both.
    f = tmp_path / "mlp.py"
    f.write_text(PROGRAM)
    cmd = [sys.executable, "-m", "solar.cli", "inverse", str(f), "--rate", "1MHz", "--arch", "B200"]
    plain = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert plain.returncode == 0, plain.stderr
    assert "math mode: bf16 (operand rounding" in plain.stdout
    assert "accuracy contract: atol 0.01, rtol 0.01 (KernelBench's convention" in plain.stdout
    out = tmp_path / "inverse.json"
    quantised = subprocess.run(
        [*cmd, "--quantize", "w4a4", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert quantised.returncode == 0, quantised.stderr
    assert "math mode: fp4 (--quantize w4a4; 2 of 3 nodes)" in quantised.stdout
    assert "quantize w4a4: 2 of 3 contraction nodes" in quantised.stdout
    # The JSON says what it assumed: 16,384 fp32 weights (65,536 B) as 8,192 B of e2m1 codes
    # and one e4m3 scale per 16 (1,024 B).
    q = json.loads(out.read_text())["quantization"]
    assert (q["recipe"], q["quantised_nodes"]) == ("w4a4", 2)
    assert (q["weight_bytes_before"], q["weight_bytes_after"]) == (65_536, 8_192 + 1_024)


def test_the_groot_like_action_head_validates_small_and_quantises_every_linear():
    # workloads/robotics/groot_n16_system1.py at a small size (its module-level constants):
    # 4 blocks of width 64, 4 Euler steps. Linear layers per step: 4 blocks x 7 (ada, q, k, v,
    # o, up, down) + the action encoder's 3 + the time MLP's 2 + the decoder's 2 = 35; the
    # state encoder's 2 run once: 4 x 35 + 2 = 142 quantised nodes. The attention's 2
    # products per block and step (4 x 4 x 2 = 32) multiply two activations and stay.
    root = Path(__file__).resolve().parents[2]
    dims = dict(LAYERS=4, WIDTH=64, HEADS=4, BACKBONE=32, IMAGE_TOKENS=16, TEXT_TOKENS=8, HIDDEN=32)
    result = solar.analyze(
        str(root / "workloads" / "robotics" / "groot_n16_system1.py"),
        arch="Jetson_Thor",
        dims=dims,
        quantize="w4a4",
    )
    assert result.validation.status == "full", result.validation.detail
    q = result.analyses[0].quantization
    assert len(q.changes) == 142
    assert len(q.skipped) == 32


W4_PROGRAM = """
import torch

N, K, G, M = 256, 512, 128, 8


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        codes = torch.randint(0, 256, (N, K // 2), dtype=torch.uint8, generator=g)
        self.register_buffer("codes", codes)
        scales = torch.rand(N, K // G, generator=g).to(torch.bfloat16)
        self.register_buffer("scales", scales)

    def forward(self, x):
        lo = (self.codes & 0x0F).to(torch.int8) - 8
        hi = (self.codes >> 4).to(torch.int8) - 8
        q = torch.stack([lo, hi], dim=-1).reshape(N, K)
        w = (q.to(torch.bfloat16).reshape(N, K // G, G) * self.scales[..., None]).reshape(N, K)
        return x @ w.T


def get_inputs():
    return [torch.randn(M, K, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
"""


def test_an_int4_group_quantised_linear_as_a_program_writes_it(tmp_path):
    # Packed int4 codes (two per byte) with one bf16 scale per 128 of K, dequantised by the
    # program and multiplied: no recipe needed. It validates, its weight is read at its packed
    # size and its MACs run in the activations' format (bf16), as a weight-only kernel's do.
    f = tmp_path / "w4.py"
    f.write_text(W4_PROGRAM)
    result = solar.analyze(str(f), arch="B200")
    assert result.validation.status == "full", result.validation.detail
    a = result.analyses[0]
    # Fused: x 8 x 512 x 2 = 8,192 + codes 256 x 256 = 65,536 + scales 256 x 4 x 2 = 2,048
    # + output 8 x 256 x 2 = 4,096 = 79,872 B.
    assert a.fused.bytes == 79_872
    # 8 x 256 x 512 = 1,048,576 MACs at bf16 (2.25e15 on B200, configs/arch/B200.yaml).
    assert result.graph.total_macs == 1_048_576
    assert a.math_modes[0].mode == "bf16"
    assert a.fused.matrix_seconds == pytest.approx(2 * 1_048_576 / 2.25e15)


def test_a_sweep_prices_every_point_under_the_recipe(tmp_path):
    # examples/ir/transformer.py over B = 1, 2: the recipe stores its linear weights (2 layers
    # of 4 x 256^2 + 2 x 256 x 1,024 = 786,432 fp32 values each: 6,291,456 B) as e2m1 codes
    # and one e4m3 scale per 16 (0.5 + 1/16 B per value: 884,736 B), whatever the batch; the
    # rest of the fused bytes (x, the norms' weights, the output) stays.
    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "sweep.json"
    cmd = [
        sys.executable,
        "-m",
        "solar.cli",
        "sweep",
        str(root / "examples" / "ir" / "transformer.py"),
    ]
    cmd += ["--dim", "B=1,2", "--arch", "B200", "--quantize", "w4a4", "--json", str(out)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    doc = json.loads(out.read_text())
    assert (doc["quantize"], doc["kv_cache"]) == ("w4a4", None)
    plain = solar.sweep(
        str(root / "examples" / "ir" / "transformer.py"), {"B": [1, 2]}, arch="B200"
    )
    for p, q in zip(plain, doc["points"], strict=True):
        assert p["bytes"]["fused"] - q["bytes"]["fused"] == 6_291_456 - 884_736
