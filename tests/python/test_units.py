"""Unfused per source operator and framework-true math modes of the PyTorch front end
(docs/sol-modes.md "Unfused" and "Math modes", docs/pytorch.md).

Eager PyTorch runs F.hardsigmoid, F.softplus, F.mish, F.huber_loss and F.kl_div as one call
each, but core ATen decomposes them into several operators. Before units, the unfused mode
charged DRAM traffic between those pieces (regression: on 5dd0d0b the unfused bytes of
hardsigmoid over N fp32 elements were 4 * 8N: add, clamp, clamp, div each reading and
writing N elements), so the unfused "bound" was above the eager run time. Every number below
is derived by hand in its comment.
"""

from __future__ import annotations

import pytest
import solar
import torch
import torch.nn.functional as F

N = 4096  # elements: 16,384 B in fp32
NB = 4 * N


class Unary(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


class Binary(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x, y):
        return self.fn(x, y)


def analyze(model, inputs, **kwargs):
    return solar.analyze(model, inputs, arch="H100_PCIe", validate=False, **kwargs)


@pytest.mark.parametrize(
    "fn",
    [F.hardsigmoid, F.softplus, F.mish, F.hardswish, F.logsigmoid],
    ids=["hardsigmoid", "softplus", "mish", "hardswish", "logsigmoid"],
)
def test_an_elementwise_operator_is_one_unit(fn):
    # One unit that reads x (N fp32) and writes y (N fp32): 2 * 16,384 = 32,768 B, the
    # traffic of eager's one kernel. Fused: the same two tensors.
    r = analyze(Unary(fn), [torch.randn(N)])
    assert r.unfused.bytes == 2 * NB
    assert r.fused.bytes == 2 * NB
    declared = [u for u in r.graph.units if u.declared]
    assert len(declared) == 1 and declared[0].label.startswith("aten.")
    assert len(declared[0].nodes) >= 3  # the decomposition's kernels and views


def test_huber_loss_reads_its_inputs_once_and_writes_a_scalar():
    # huber_loss(x, y) with mean reduction: one unit reading x and y (2 * 16,384 B) and
    # writing the fp32 scalar (4 B): 32,772 B. Node by node (5dd0d0b) every intermediate of
    # sub, abs, lt, mul, where, mean crossed DRAM.
    r = analyze(Binary(F.huber_loss), [torch.randn(N), torch.randn(N)])
    assert r.unfused.bytes == 2 * NB + 4
    assert r.fused.bytes == 2 * NB + 4


def test_kl_div_is_one_unit():
    # kl_div(log q, p, reduction="batchmean") on [64, 64]: torch.kl_div(..., "sum") is one
    # unit reading both (2 * 16,384 B) and writing the scalar sum (4 B); F.kl_div then divides
    # by the batch in Python, a second call (eager: a second kernel) reading and writing 4 B.
    model = Binary(lambda q, p: F.kl_div(q, p, reduction="batchmean"))
    r = analyze(model, [torch.randn(64, 64).log_softmax(-1), torch.rand(64, 64)])
    assert r.unfused.bytes == 2 * NB + 4 + 8


def test_unfused_is_never_below_fused_and_units_name_their_nodes():
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.Hardsigmoid())
    r = analyze(model, [torch.randn(64, 64)])
    # Every node in exactly one unit (blocks, and nodes alone), the units in node order.
    members = [n for u in r.graph.units for n in u.nodes]
    assert sorted(members) == [n.id for n in r.graph.nodes]
    assert [u.nodes[0] for u in r.graph.units] == sorted(u.nodes[0] for u in r.graph.units)
    assert len(r.analysis.units) == len(r.graph.units)
    assert sum(u.bytes for u in r.analysis.units) == r.unfused.bytes
    assert r.unfused.bytes >= r.fused.bytes


def test_conv_bias_is_part_of_the_convolution():
    # Conv2d(3 -> 4, 3x3) on [2, 3, 8, 8]: the convolution and its bias add form one unit,
    # reading x (2*3*8*8*4 = 1,536 B), the weight (4*3*3*3*4 = 432 B) and the bias (16 B) and
    # writing y (2*4*6*6*4 = 1,152 B): 3,136 B. Before (5dd0d0b) the convolution wrote y and the
    # bias add read it back and wrote it again: 3,136 + 2 * 1,152 = 5,440 B.
    r = analyze(torch.nn.Conv2d(3, 4, 3), [torch.randn(2, 3, 8, 8)])
    assert r.unfused.bytes == 1536 + 432 + 16 + 1152
    assert r.fused.bytes == 1536 + 432 + 16 + 1152


def test_clone_is_the_copy_eager_makes():
    # x.clone() on [64, 32] fp32 (8,192 B) reads x and writes a new tensor: 16,384 B unfused
    # and, being an output, 8,192 B written in the fused mode too (plus x read: 16,384 B).
    # On 5dd0d0b the clone was an identity: 0 B unfused, and the returned x cost nothing.
    r = analyze(Unary(lambda x: x.clone()), [torch.randn(64, 32)])
    assert r.unfused.bytes == 2 * 8192
    assert r.fused.bytes == 2 * 8192


def test_contiguous_of_a_transpose_copies_once():
    # x.t().contiguous(): eager's t() is a view and contiguous() the one copy (8,192 B read,
    # 8,192 B written); the lowering's transpose already copies, so the clone adds nothing.
    r = analyze(Unary(lambda x: x.t().contiguous()), [torch.randn(64, 32)])
    assert r.unfused.bytes == 2 * 8192


def test_contiguous_of_a_strided_slice_copies_the_slice():
    # x[:, ::2].contiguous() on [64, 32]: reads the 1,024 selected elements (4,096 B; the
    # view is read at most at its own size) and writes them: 8,192 B.
    r = analyze(Unary(lambda x: x[:, ::2].contiguous()), [torch.randn(64, 32)])
    assert r.unfused.bytes == 2 * 4096


def test_repeat_interleave_writes_its_output():
    # x.repeat_interleave(2, dim=1) on [64, 32] fp32: core ATen's unsqueeze, expand, clone,
    # view. Eager reads x (8,192 B) and writes the [64, 64] result (16,384 B): 24,576 B in both
    # modes. On bbc4a70 the decomposition's clone was free, the output a view of x: 0 B.
    r = analyze(Unary(lambda x: x.repeat_interleave(2, dim=1)), [torch.randn(64, 32)])
    assert r.unfused.bytes == 8192 + 16384
    assert r.fused.bytes == 8192 + 16384


def test_a_transpose_reshaped_into_the_output_is_written():
    # x.transpose(0, 1).reshape(32 * 64) on [64, 32]: the reshape of a transposed tensor
    # cannot be a view, so eager copies once: 8,192 B read, 8,192 B written. The lowering's
    # permute is that copy; the decomposition's clone after it adds none (not 3 * 8,192 B).
    r = analyze(Unary(lambda x: x.transpose(0, 1).reshape(32 * 64)), [torch.randn(64, 32)])
    assert r.fused.bytes == 2 * 8192


def test_an_expand_returned_as_it_is_stays_a_view():
    # x.expand(4, 64, 32): eager returns a stride-0 view of x; nothing moves (0 B).
    r = analyze(Unary(lambda x: x.expand(4, 64, 32)), [torch.randn(64, 32)])
    assert r.fused.bytes == 0 and r.unfused.bytes == 0


def test_a_transposed_operand_of_a_batched_matmul_is_read_in_place():
    # q @ k.transpose(-2, -1) on [2, 4, 16, 8] each: core ATen's matmul clones the transposed
    # k before bmm (eager copies it inside matmul). The copy stays inside the matmul's unit
    # and is no node of its own: the fused bytes are q, k (4,096 B each) and the [2, 4, 16,
    # 16] scores (8,192 B): 16,384 B, and no node is a copy.
    r = analyze(
        Binary(lambda q, k: q @ k.transpose(-2, -1)),
        [torch.randn(2, 4, 16, 8), torch.randn(2, 4, 16, 8)],
    )
    assert r.fused.bytes == 4096 + 4096 + 8192
    assert not [n for n in r.graph.nodes if n.op == "copy"]


# --- math modes ------------------------------------------------------------------------------
# The framework's own settings, without an accuracy contract (accuracy="framework"); under
# the default contract (KernelBench's 1e-2) every fp32 contraction here is priced at bf16
# (test_accuracy.py).


def test_fp32_matmul_runs_in_true_fp32_by_default():
    # torch.get_float32_matmul_precision() is "highest" by default: cuBLAS runs fp32 GEMMs on
    # the CUDA cores. [256, 256] @ [256, 256]: 2 * 256^3 = 33,554,432 FLOPs at H100 PCIe's fp32
    # vector rate 51.2e12 = 655.36 ns (on 5dd0d0b: TF32 at 378e12, 88.8 ns).
    assert torch.get_float32_matmul_precision() == "highest"
    r = analyze(
        Binary(torch.matmul), [torch.randn(256, 256), torch.randn(256, 256)], accuracy="framework"
    )
    a = r.analysis
    assert [(g.mode, g.reason) for g in a.math_modes] == [("fp32", "set by the program")]
    assert a.fused.matrix_seconds == pytest.approx(2 * 256**3 / 51.2e12)
    assert "fp32 (set by the program; vector units, no matrix rate)" in a.math_mode
    assert any("get_float32_matmul_precision() is 'highest'" in n for n in r.notes)


def test_convolution_uses_tf32_as_cudnn_allows_by_default():
    # torch.backends.cudnn.allow_tf32 is True by default: the convolution's MACs at TF32.
    assert torch.backends.cudnn.allow_tf32
    r = analyze(torch.nn.Conv2d(16, 16, 3), [torch.randn(1, 16, 16, 16)], accuracy="framework")
    assert [g.mode for g in r.analysis.math_modes] == ["tf32"]
    # 1*16*14*14*16*3*3 = 451,584 MACs at 378e12 FLOP/s.
    assert r.analysis.fused.matrix_seconds == pytest.approx(2 * 451584 / 378e12)


def test_tf32_matmul_precision_is_followed():
    old = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high")
    try:
        r = analyze(
            Binary(torch.matmul), [torch.randn(64, 64), torch.randn(64, 64)], accuracy="framework"
        )
    finally:
        torch.set_float32_matmul_precision(old)
    assert [g.mode for g in r.analysis.math_modes] == ["tf32"]


def test_fp32_math_option_overrides_the_program():
    r = analyze(Binary(torch.matmul), [torch.randn(64, 64), torch.randn(64, 64)], fp32_math="tf32")
    assert [(g.mode, g.reason) for g in r.analysis.math_modes] == [("tf32", "--fp32-math tf32")]
    # 2 * 64^3 = 524,288 FLOPs at 378e12.
    assert r.analysis.fused.matrix_seconds == pytest.approx(2 * 64**3 / 378e12)


def test_mixed_modes_are_reported_per_group():
    class ConvThenLinear(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(4, 4, 1)
            self.fc = torch.nn.Linear(8, 8)

        def forward(self, x):
            return self.fc(self.conv(x))

    r = analyze(ConvThenLinear(), [torch.randn(1, 4, 8, 8)], accuracy="framework")
    groups = {(g.mode, g.nodes) for g in r.analysis.math_modes}
    assert groups == {("tf32", 1), ("fp32", 1)}
    assert "1 of 2 nodes" in r.analysis.math_mode
    # Under KernelBench's 1e-2 both are bf16: sqrt(2/3) 2^-8 = 0.0032 <= 0.02.
    r = analyze(ConvThenLinear(), [torch.randn(1, 4, 8, 8)])
    assert {(g.mode, g.nodes) for g in r.analysis.math_modes} == {("bf16", 2)}
