"""Narrow math inside a program (python/solar/frontend/narrow.py, docs/sol-modes.md, "Narrow
math inside a program"): a reference that quantises to fp8 and multiplies the dequantised
values (`codes.float() * scale`, then `a @ b.T`) is priced at the fp8 matrix rate where the
scale is constant over K-blocks of at least 32; a per-element scale stays at the accuracy
contract's rate. Every program here is small and self-contained, and validates against
PyTorch.

Numbers, all on B200 (configs/arch/B200.yaml):
- fp8 matrix rate 4.5e15 FLOP/s ("FP8/FP6 Tensor Core 9 PFLOPS with sparsity / 2"), bf16
  2.25e15 ("FP16/BF16 Tensor Core 4.5 PFLOPS with sparsity / 2").
- a [256, 512] x [384, 512]^T product: MACs = 256 * 384 * 512 = 50,331,648; at fp8,
  matrix seconds = 2 * 50,331,648 / 4.5e15 = 2.2369621e-8 s; at bf16, 4.4739243e-8 s.
"""

from __future__ import annotations

import pytest
import solar
import torch
from solar.execution import execute

M, N, K = 256, 384, 512
MACS = 256 * 384 * 512  # 50,331,648
FP8_FLOPS_PER_SECOND = 4.5e15  # configs/arch/B200.yaml matrix_flops_per_second.fp8
BF16_FLOPS_PER_SECOND = 2.25e15  # configs/arch/B200.yaml matrix_flops_per_second.bf16
E4M3 = torch.float8_e4m3fn


def quantise(x: torch.Tensor, recipe):
    """(codes, scale, dequantise) of x [R, K] in the SOL-ExecBench reference's way: the scale is
    amax / 448 per tensor, per row, per (bm x bk) block, or per element."""
    rows, k = x.shape
    if recipe == "tensor":
        s = x.abs().amax().clamp(min=1e-12) / 448.0
        return (x / s).clamp(-448, 448).to(E4M3), s, lambda c, s: c.to(torch.float32) * s
    if recipe == "row":
        s = x.abs().amax(dim=1).clamp(min=1e-12) / 448.0
        codes = (x / s.unsqueeze(1)).clamp(-448, 448).to(E4M3)
        return codes, s, lambda c, s: c.to(torch.float32) * s.unsqueeze(1)
    if recipe == "element":
        s = x.abs().clamp(min=1e-12) / 448.0
        return (x / s).clamp(-448, 448).to(E4M3), s, lambda c, s: c.to(torch.float32) * s
    bm, bk = recipe
    blocks = (rows // bm, bm, k // bk, bk)
    s = x.reshape(blocks).abs().amax(dim=3).amax(dim=1).clamp(min=1e-12) / 448.0
    codes = (x.reshape(blocks) / s.unsqueeze(1).unsqueeze(3)).clamp(-448, 448)
    codes = codes.reshape(rows, k).to(E4M3)

    def dequantise(c, s):
        scaled = c.to(torch.float32).reshape(blocks) * s.unsqueeze(1).unsqueeze(3)
        return scaled.reshape(rows, k)

    return codes, s, dequantise


class QuantisedLinear(torch.nn.Module):
    """bf16 in, quantised to fp8 inside forward, the dequantised values multiplied."""

    def __init__(self, recipe_x, recipe_w):
        super().__init__()
        self.recipe_x, self.recipe_w = recipe_x, recipe_w

    def forward(self, x, w):
        cx, sx, dx = quantise(x.float(), self.recipe_x)
        cw, sw, dw = quantise(w.float(), self.recipe_w)
        return (dx(cx, sx) @ dw(cw, sw).T).to(torch.bfloat16)


_RESULTS: dict = {}


def analysed(recipe_x, recipe_w):
    key = (recipe_x, recipe_w)
    if key not in _RESULTS:
        torch.manual_seed(0)
        x = torch.randn(M, K, dtype=torch.bfloat16)
        w = torch.randn(N, K, dtype=torch.bfloat16)
        _RESULTS[key] = solar.analyze(
            QuantisedLinear(recipe_x, recipe_w), [x, w], arch="B200", cache_aware=False
        )
    return _RESULTS[key]


def the_product(result):
    """(node, its NodeSol) of the one node with MACs."""
    found = [
        (n, s) for n, s in zip(result.graph.nodes, result.analyses[0].nodes, strict=True) if n.macs
    ]
    assert len(found) == 1
    return found[0]


def assert_validates(result):
    """The lowered program's output matches PyTorch's. The tolerance model's allowance for
    the quantisation chain (each operand rounded to fp8 before 512 products) exceeds the
    output itself, so the validator may call its own comparison undecidable ("inconclusive");
    the error bound here decides instead: the output, a sum of 512 products of N(0, 1)
    values (std sqrt(512) = 23, largest of 98,304 about 4.3 std = 100), is bf16, whose spacing
    at 64..128 is 0.5, so a correct program errs by at most 1 (two roundings), while one
    wrong block scale (a factor 2 or more on a 128-element partial sum, std sqrt(128) = 11)
    would err by far more."""
    assert result.validation.status in ("full", "inconclusive"), result.validation.detail
    for out in result.validation.outputs:
        assert out.ok and out.mismatches == 0
        assert out.max_abs_error <= 1.0, out.max_abs_error


def test_per_tensor_scales_price_the_product_at_the_fp8_rate():
    r = analysed("tensor", "tensor")
    node, sol = the_product(r)
    assert node.name.startswith("mm_block_scaled")
    assert node.macs == MACS
    assert sol.math_mode == "fp8"
    # 2 * 50,331,648 / 4.5e15 = 2.2369621e-8 s
    assert sol.matrix_seconds == pytest.approx(2 * MACS / FP8_FLOPS_PER_SECOND, rel=1e-12)
    # One block along K: the rescale is one multiply-add per output (256 * 384 = 98,304),
    # and the scales' product is formed once (1 mul).
    assert node.flops["mul"] == 98_304 + 1
    assert node.flops["add"] == 98_304
    # Reads the codes (the fp32 casts of the fp8 tensors: 256*512*4 + 384*512*4 = 1,310,720
    # bytes) and the two 0-d fp32 scales (4 + 4).
    assert node.bytes_read == 1_310_720 + 8
    assert any("per-tensor scale" in n and "block-scaled FP8 GEMM" in n for n in r.notes)
    assert_validates(r)


def test_block_scales_1x128_and_128x128_price_the_product_at_the_fp8_rate():
    r = analysed((1, 128), (128, 128))
    node, sol = the_product(r)
    assert node.macs == MACS
    assert sol.math_mode == "fp8"
    assert sol.matrix_seconds == pytest.approx(2 * MACS / FP8_FLOPS_PER_SECOND, rel=1e-12)
    # K = 512 in 4 blocks of 128: the rescale is one multiply-add per block and output,
    # 4 x 98,304 = 393,216; the scales' product once per row (256), column block (384 / 128
    # = 3) and K-block (4): 3,072 mul.
    assert node.flops["mul"] == 393_216 + 3_072
    assert node.flops["add"] == 393_216
    # Scales read: 1x128 on x: 256 rows x 4 blocks x 4 bytes = 4,096; 128x128 on w:
    # 3 x 4 blocks x 4 bytes = 48.
    assert node.bytes_read == 1_310_720 + 4_096 + 48
    note = next(n for n in r.notes if "block-scaled FP8 GEMM" in n)
    assert "1x128 block scales" in note and "128x128 block scales" in note
    assert_validates(r)


def test_per_row_scales_price_the_product_at_the_fp8_rate():
    r = analysed("row", "row")
    node, sol = the_product(r)
    assert sol.math_mode == "fp8"
    assert sol.matrix_seconds == pytest.approx(2 * MACS / FP8_FLOPS_PER_SECOND, rel=1e-12)
    # Scales read: 256 + 384 rows x 4 bytes = 2,560.
    assert node.bytes_read == 1_310_720 + 2_560
    assert_validates(r)


@pytest.mark.parametrize(
    "recipe, why",
    [
        ("element", "a scale per element: nothing to factor out of a block's sum"),
        ((1, 16), "1x16 blocks: finer than one fp8 MMA's K of 32"),
    ],
)
def test_scales_finer_than_an_fp8_mma_stay_at_the_contract_rate(recipe, why):
    r = analysed(recipe, recipe)
    node, sol = the_product(r)
    assert not node.name.startswith("mm_block_scaled"), why
    # KernelBench's default contract (1e-2) prices fp32 products at bf16 (operand rounding
    # sqrt(2/3) * 2^-8 = 0.0032); fp8's sqrt(2/3) * 2^-4 = 0.051 does not meet it.
    assert sol.math_mode == "bf16"
    assert sol.matrix_seconds == pytest.approx(2 * MACS / BF16_FLOPS_PER_SECOND, rel=1e-12)
    assert not any("block-scaled" in n for n in r.notes)
    assert_validates(r)


# A SOL-ExecBench-style definition: bf16 in, the reference quantises with 1x128 activation and
# 128x128 weight block scales and multiplies the dequantised values. A definition's bf16 data
# sets --fp32-math bf16 (docs/definitions.md, "Math mode"); the product's operands hold fp8
# values, so it is priced at the fp8 rate under that mode too.
_REFERENCE = """import torch

def _q(x, bm, bk):
    r, k = x.shape
    blocks = (r // bm, bm, k // bk, bk)
    s = x.reshape(blocks).abs().amax(dim=3).amax(dim=1).clamp(min=1e-12) / 448.0
    c = (x.reshape(blocks) / s.unsqueeze(1).unsqueeze(3)).clamp(-448, 448)
    c = c.reshape(r, k).to(torch.float8_e4m3fn)
    d = c.to(torch.float32).reshape(blocks) * s.unsqueeze(1).unsqueeze(3)
    return d.reshape(r, k)

@torch.no_grad()
def run(x, w):
    return (_q(x.float(), 1, 128) @ _q(w.float(), 128, 128).T).to(torch.bfloat16)
"""


def test_a_definition_quantising_in_its_reference_is_priced_at_the_fp8_rate(tmp_path):
    """M = 256, N = 384, K = 512 as above: the product's matrix seconds are 2 * 50,331,648 /
    4.5e15 = 2.2369621e-8 s under the definition's --fp32-math bf16 (at bf16 they were
    4.4739243e-8 s)."""
    import json
    import subprocess
    import sys

    definition = {
        "name": "fp8_blockwise_linear",
        "op_type": "gemm",
        "axes": {
            "M": {"type": "var"},
            "N": {"type": "const", "value": N},
            "K": {"type": "const", "value": K},
        },
        "inputs": {
            "x": {"shape": ["M", "K"], "dtype": "bfloat16"},
            "w": {"shape": ["N", "K"], "dtype": "bfloat16"},
        },
        "outputs": {"y": {"shape": ["M", "N"], "dtype": "bfloat16"}},
        "reference": _REFERENCE,
    }
    workload = {
        "uuid": "m256",
        "axes": {"M": M},
        "inputs": {"x": {"type": "random"}, "w": {"type": "random"}},
        "tolerance": {"max_atol": 0.005, "max_rtol": 0.02, "required_matched_ratio": 0.99},
    }
    path = tmp_path / "fp8_blockwise_linear.json"
    path.write_text(json.dumps(definition))
    path.with_suffix(".jsonl").write_text(json.dumps(workload) + "\n")
    out = tmp_path / "a.json"
    r = subprocess.run(
        [sys.executable, "-m", "solar.cli", "analyze", str(path), "--workload", "m256"]
        + ["--arch", "B200", "--no-cache-aware", "--json", str(out)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert doc["math_modes"][0]["mode"] == "fp8"
    (node,) = [n for n in doc["nodes"] if n["macs"]]
    assert node["macs"] == MACS
    assert node["seconds"]["matrix"] == pytest.approx(2 * MACS / FP8_FLOPS_PER_SECOND, rel=1e-12)
    assert "1x128 block scales" in r.stdout and "128x128 block scales" in r.stdout
    assert doc["validation"]["status"] in ("full", "inconclusive"), doc["validation"]
    assert doc["validation"]["detail"].startswith("1 output(s) match PyTorch")


# ---------------------------------------------------------------------- torch._scaled_mm
class ScaledMm(torch.nn.Module):
    """torch._scaled_mm as the NVFP4 and FP8 references call it: b is [N, K], transposed."""

    def forward(self, a, b, sa, sb):
        return torch._scaled_mm(a, b.t(), sa, sb, out_dtype=torch.bfloat16)


def test_scaled_mm_of_fp8_with_per_tensor_scales_runs_at_the_fp8_rate():
    # a [256, 512] e4m3, b [384, 512] e4m3, 0-d fp32 scales: MACs 50,331,648 at fp8
    # (2.2369621e-8 s); the epilogue multiplies each of 256 * 384 = 98,304 outputs by both
    # scales: 196,608 mul. PyTorch has a CPU kernel for it: the program validates.
    torch.manual_seed(0)
    a = torch.randn(M, K).to(E4M3)
    b = torch.randn(N, K).to(E4M3)
    r = solar.analyze(
        ScaledMm(), [a, b, torch.tensor(0.5), torch.tensor(2.0)], arch="B200", cache_aware=False
    )
    node, sol = the_product(r)
    assert node.name.startswith("scaled_mm_fp8")
    assert node.macs == MACS
    assert sol.math_mode == "fp8"
    assert sol.matrix_seconds == pytest.approx(2 * MACS / FP8_FLOPS_PER_SECOND, rel=1e-12)
    assert node.flops["mul"] == 196_608
    assert r.validation.status in ("full", "inconclusive"), r.validation.detail
    assert all(out.ok and out.mismatches == 0 for out in r.validation.outputs)
    assert any("torch._scaled_mm of fp8 e4m3fn operands" in n for n in r.notes)


FP4_FLOPS_PER_SECOND = 9.0e15  # configs/arch/B200.yaml matrix_flops_per_second.fp4
E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


def to_blocked(scales: torch.Tensor) -> torch.Tensor:
    """[rows, cols] scales in the swizzled layout torch._scaled_mm reads for NVFP4 (the
    SOL-ExecBench reference's `convert_to_blocked_format_for_pytorch_scaled_mm`)."""
    rows, cols = scales.shape
    blocks = scales.view(rows // 128, 128, cols // 4, 4).permute(0, 2, 1, 3)
    return blocks.reshape(-1, 4, 32, 4).transpose(1, 2).reshape(-1, 32, 16).flatten()


def test_scaled_mm_of_nvfp4_runs_at_the_fp4_rate_with_its_scales_on_the_matrix_unit():
    # a [256, 512] and b [384, 512] E2M1 codes, packed two per byte ([256, 256] and
    # [384, 256] float4_e2m1fn_x2), e4m3 scales per 16 of K (32 blocks) swizzled.
    # MACs 50,331,648 at fp4: 2 * 50,331,648 / 9e15 = 1.1184811e-8 s. The scales cost no
    # vector FLOPs (the block-scaled MMA applies them). Bytes read: the codes at half a byte
    # (256*512/2 + 384*512/2 = 163,840), the scales at one byte per 16 elements
    # (256*32 + 384*32 = 20,480); written: the bf16 output, 256*384*2 = 196,608.
    torch.manual_seed(0)
    ca = torch.randint(0, 256, (M, K // 2), dtype=torch.uint8)
    cb = torch.randint(0, 256, (N, K // 2), dtype=torch.uint8)
    # Scales 2^e for e in -3..2: exact in e4m3 and in every product.
    sa = 2.0 ** torch.randint(-3, 3, (M, K // 16)).float()
    sb = 2.0 ** torch.randint(-3, 3, (N, K // 16)).float()
    inputs = [
        ca.view(torch.float4_e2m1fn_x2),
        cb.view(torch.float4_e2m1fn_x2),
        to_blocked(sa.to(E4M3)),
        to_blocked(sb.to(E4M3)),
    ]
    # PyTorch has no CPU kernel for the NVFP4 product: analysed without validation.
    r = solar.analyze(ScaledMm(), inputs, arch="B200", cache_aware=False, validate=False)
    node, sol = the_product(r)
    assert node.name.startswith("scaled_mm_nvfp4")
    assert node.macs == MACS
    assert sol.math_mode == "fp4"
    assert sol.matrix_seconds == pytest.approx(2 * MACS / FP4_FLOPS_PER_SECOND, rel=1e-12)
    assert sum(node.flops.values()) == 0
    assert r.unfused.bytes == 163_840 + 20_480 + 196_608
    assert any("NVFP4 operands [256, 512] and [384, 512]" in n for n in r.notes)

    # The lowered program computes the block-scaled product: against the codes decoded by
    # hand (low nibble first) times their scales, summed in fp64 and rounded to bf16.
    def decoded(codes, scales):
        lut = torch.tensor(E2M1, dtype=torch.float64)
        pairs = torch.stack([lut[(codes & 15).long()], lut[(codes >> 4).long()]], dim=-1)
        values = pairs.reshape(codes.shape[0], -1)
        return values * scales.double().repeat_interleave(16, dim=1)

    want = (decoded(ca, sa) @ decoded(cb, sb).T).to(torch.bfloat16)
    got = execute(r.program, inputs).outputs["out0"]
    assert torch.equal(torch.from_numpy(got.astype("float32")).to(torch.bfloat16), want)


def test_torchao_int8_weight_only_reads_its_codes_and_scales():
    # torchao's Int8WeightOnlyConfig makes a linear's weight an Int8Tensor (int8 codes
    # [256, 512] and an fp32 scale per output row [256, 1]); torch.export unwraps it into
    # those two parts. x [64, 512] fp32 @ w.T + b: fused bytes 64*512*4 (x) + 256*512 (codes)
    # + 256*4 (scales) + 256*4 (bias) + 64*256*4 (output) = 329,728; MACs 64*256*512 =
    # 8,388,608. Validation feeds the parts of the subclass weight.
    torchao = pytest.importorskip("torchao", reason="torchao is the `quant` extra")
    from torchao.quantization import Int8WeightOnlyConfig, quantize_

    assert torchao.__version__
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(512, 256))
    quantize_(model, Int8WeightOnlyConfig())
    r = solar.analyze(model, [torch.randn(64, 512)], arch="B200", cache_aware=False)
    assert r.validation.status == "full", r.validation.detail
    assert r.fused.bytes == 329_728
    assert r.graph.total_macs == 8_388_608
    # Int8DynamicActivationInt8WeightConfig quantises the activations too: torch._int_mm of
    # int8 codes (uint8 on the CPU path), at the int8 rate; the bytes read and written are
    # the same (the activations are quantised on chip).
    model = torch.nn.Sequential(torch.nn.Linear(512, 256))
    from torchao.quantization import Int8DynamicActivationInt8WeightConfig

    quantize_(model, Int8DynamicActivationInt8WeightConfig())
    r = solar.analyze(model, [torch.randn(64, 512)], arch="B200", cache_aware=False)
    assert r.validation.status == "full", r.validation.detail
    assert r.fused.bytes == 329_728
    node, sol = the_product(r)
    assert node.name.startswith("int_mm") and node.macs == 8_388_608
    assert sol.math_mode == "int8"


def test_scaled_mm_outside_the_supported_forms_is_an_error_naming_the_case():
    # NVFP4 with M = 64: its 64 x 32 scales are padded to a whole 128-row tile (128 * 32 =
    # 4,096), which the lowering does not unpad. fp8 with scales per 128 of K ([64, 2] and
    # [2, 128] for K = 256): neither per-tensor nor row-wise.
    from solar.errors import UserError

    codes = torch.zeros((64, 256), dtype=torch.uint8).view(torch.float4_e2m1fn_x2)
    weight = torch.zeros((128, 256), dtype=torch.uint8).view(torch.float4_e2m1fn_x2)
    ones = torch.ones(128 * 32).to(E4M3)
    with pytest.raises(UserError, match="this operand has 64 rows and 32 blocks of K, and 4096"):
        solar.analyze(ScaledMm(), [codes, weight, ones, ones], arch="B200", validate=False)
    a, b = torch.randn(64, 256).to(E4M3), torch.randn(128, 256).to(E4M3)
    with pytest.raises(UserError, match=r"got scales of shapes \[64, 2\] and \[2, 128\]"):
        solar.analyze(
            ScaledMm(), [a, b, torch.ones(64, 2), torch.ones(2, 128)], arch="B200", validate=False
        )
