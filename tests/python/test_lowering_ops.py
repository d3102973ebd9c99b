"""Every lowering rule of the PyTorch front end (python/solar/frontend/rules.py), checked
numerically: a tiny module that uses the operator is captured, lowered to IR, run by the
reference interpreter on the same inputs and weights as PyTorch, and compared with PyTorch's
output. Sizes are small and odd, with size-1 dims where they matter. A last test checks that
every key of RULES is exercised by some case (or is a documented unsupported operator whose
error is tested), and that docs/pytorch-operators.md lists every rule."""

from __future__ import annotations

import copy
import functools
import warnings
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import solar  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402, N812
from solar.errors import UserError  # noqa: E402
from solar.frontend import Capture, capture_module, lower  # noqa: E402
from solar.frontend.fullrun import dropout_at_expectation, random_tape  # noqa: E402
from solar.frontend.lower import ir_dtype  # noqa: E402
from solar.frontend.rules import RULES, UNSUPPORTED  # noqa: E402
from solar.frontend.validation import load_lowered  # noqa: E402
from solar.tolerance import compare, output_budgets  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
RTOL = 1e-4
ATOL = 1e-5


class Fn(nn.Module):
    """A module whose forward is `fn(self, *inputs)`; `mods` are its submodules (weights)."""

    def __init__(self, fn, *mods):
        super().__init__()
        self.fn = fn
        self.mods = nn.ModuleList(mods)

    def forward(self, *xs):
        return self.fn(self, *xs)


def f(fn, *mods):
    return Fn(lambda self, *xs: fn(*xs), *mods)


def m(fn, *mods):
    """fn receives the submodules first: fn(mod0, ..., x0, ...)."""
    return Fn(lambda self, *xs: fn(*self.mods, *xs), *mods)


def R(*shape):  # noqa: N802
    return torch.randn(*shape)


def P(*shape):  # noqa: N802
    return torch.rand(*shape) + 0.5  # positive, away from 0


def I(high, *shape):  # noqa: E743, N802
    return torch.randint(0, high, shape)


class BufferModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mask", torch.tril(torch.ones(5, 5)).view(1, 5, 5))

    def forward(self, x):
        return x.masked_fill(self.mask == 0, -1.0)


class InPlace(nn.Module):
    def forward(self, x):
        y = x.clone()
        y.mul_(2.0).add_(1.0)
        y[:, 0] = 0.0  # select_scatter / copy_
        y[:, 1:3] += 1.0  # slice_scatter
        return y.relu_()


class StochasticDepth(nn.Module):
    """torchvision's row-mode StochasticDepth in training mode: a Bernoulli mask per sample,
    scaled by the survival rate (bernoulli.p)."""

    def forward(self, x):
        keep = 0.75
        noise = torch.empty([x.shape[0], 1], dtype=x.dtype, device=x.device).bernoulli_(keep)
        noise.div_(keep)
        return x * noise


class MaskedAssign(nn.Module):
    def forward(self, x):
        y = x.clone()
        y[y > 0.5] = 0.0  # index_put with a boolean mask
        y[(x < -0.5).any(1)] = 1.0  # a mask over the leading dim
        return y.index_put((x < 0,), torch.full((), 2.0, device=x.device), accumulate=True)


def _lstm():
    return m(lambda lstm, x: lstm(x)[0], nn.LSTM(4, 6, num_layers=2, batch_first=True))


def _gru():
    return m(lambda gru, x: gru(x)[0], nn.GRU(4, 5, batch_first=True, bidirectional=True))


def _rnn_relu():
    return m(lambda rnn, x: rnn(x)[1], nn.RNN(4, 5, num_layers=2, nonlinearity="relu"))


# name -> () -> (module or function, inputs[, (rtol, atol)])
CASES = {
    # ---------------------------------------------------------------- elementwise unary
    "relu": lambda: (f(torch.relu), [R(3, 5)]),
    "sigmoid": lambda: (f(torch.sigmoid), [R(3, 5)]),
    "tanh": lambda: (f(torch.tanh), [R(3, 5)]),
    "exp_log": lambda: (f(lambda x: torch.log(torch.exp(x) + 1)), [R(3, 5)]),
    "sqrt_rsqrt": lambda: (f(lambda x: torch.sqrt(x) + torch.rsqrt(x)), [P(7)]),
    "neg_abs_reciprocal": lambda: (f(lambda x: -torch.abs(x) + torch.reciprocal(x)), [P(2, 3)]),
    "erf_sin_cos": lambda: (f(lambda x: torch.erf(x) + torch.sin(x) * torch.cos(x)), [R(9)]),
    "log1p_expm1": lambda: (f(lambda x: torch.log1p(x) + torch.expm1(x)), [P(4, 1)]),
    "floor_ceil_round_trunc": lambda: (
        f(lambda x: torch.floor(x) + torch.ceil(x) * 2 + torch.round(x) * 3 + torch.trunc(x) * 5),
        [torch.tensor([-2.5, -1.7, -0.5, 0.0, 0.4, 0.5, 1.5, 2.5, 3.7])],
    ),
    "sign": lambda: (f(torch.sign), [torch.tensor([-2.0, 0.0, 3.0])]),
    "log2_log10_exp2": lambda: (
        f(lambda x: torch.log2(x) + torch.log10(x) + torch.exp2(x)),
        [P(3, 4)],
    ),
    "sinh_cosh_tan": lambda: (
        f(lambda x: torch.sinh(x) + torch.cosh(x) + torch.tan(x)),
        [R(5) * 0.5],
    ),
    "isnan_isinf": lambda: (
        f(lambda x: torch.isnan(x).float() + 2 * torch.isinf(x).float()),
        [torch.tensor([1.0, float("nan"), float("inf"), -float("inf"), 0.0])],
    ),
    "gelu": lambda: (f(lambda x: F.gelu(x) + F.gelu(x, approximate="tanh")), [R(3, 7)]),
    "silu_mish": lambda: (f(lambda x: F.silu(x) + F.mish(x)), [R(4, 5)]),
    "leaky_relu": lambda: (f(lambda x: F.leaky_relu(x, 0.2)), [R(3, 5)]),
    "elu_selu_celu": lambda: (f(lambda x: F.elu(x, 0.7) + F.selu(x) + F.celu(x, 1.3)), [R(6)]),
    # aten.elu with every parameter (`elu`) and with scale 1 (`elu_input`); F.elu(x) (`elu_unit`)
    "elu_parameters": lambda: (
        f(
            lambda x: (
                torch.ops.aten.elu(x, 0.7, 1.2, 0.8)
                + torch.ops.aten.elu(x, 0.7, 1.0, 0.8)
                + F.elu(x)
            )
        ),
        [R(6)],
    ),
    "hardtanh_relu6_clamp": lambda: (
        f(lambda x: F.hardtanh(x, -0.5, 0.5) + F.relu6(x * 4) + x.clamp(min=0.1)),
        [R(3, 4)],
    ),
    # F.hardtanh with its default bounds written as ints, on values beyond them: torch.export
    # omits the integer arguments equal to ATen's defaults (-1.0, 1.0), and the shared clamp
    # rule took the missing bounds for none (the output was x; KernelBench level 2 problem 16
    # failed validation).
    "hardtanh_defaults": lambda: (
        f(lambda x: F.hardtanh(x, min_val=-1, max_val=1) + F.hardtanh(x * 3)),
        [R(40) * 4],
    ),
    "hardsigmoid_hardswish": lambda: (f(lambda x: F.hardsigmoid(x) + F.hardswish(x)), [R(20) * 4]),
    "softplus_softsign": lambda: (
        f(lambda x: F.softplus(x) + F.softplus(x, beta=2, threshold=3) + F.softsign(x)),
        [R(4, 5) * 3],
    ),
    "logsigmoid_tanhshrink": lambda: (f(lambda x: F.logsigmoid(x) + F.tanhshrink(x)), [R(7)]),
    "pow": lambda: (
        f(lambda x, y: x**2.5 + torch.pow(x, y) + torch.pow(2.0, y)),
        [P(3, 4), R(3, 4)],
    ),
    # ---------------------------------------------------------------- elementwise binary
    "add_sub_mul_div": lambda: (
        f(lambda x, y: (x + y) * (x - y) / (y + 3.0)),
        [R(2, 3, 4), P(2, 3, 4)],
    ),
    "broadcast_size1_and_0d": lambda: (
        f(lambda x, y, z: x * y + z.sum() - x / (y + 2) * z.amax()),
        [R(2, 1, 4), P(3, 1), R(1)],
    ),
    "alpha": lambda: (
        f(lambda x, y: torch.add(x, y, alpha=2) + torch.sub(x, y, alpha=0.5)),
        [R(5), R(5)],
    ),
    "scalar_first": lambda: (f(lambda x: 3.0 - x + 2.0 * x + 1.0 / x), [P(2, 3)]),
    "rsub": lambda: (f(lambda x: torch.rsub(x, 2.0)), [R(4)]),
    "scalar_ops": lambda: (
        f(lambda x: torch.mul(x, 3) + torch.add(x, 1) - torch.sub(x, 2) + torch.div(x, 4)),
        [R(3)],
    ),
    "maximum_minimum": lambda: (
        f(lambda x, y: torch.maximum(x, y) + torch.minimum(x, y) * 2),
        [R(3, 4), R(4)],
    ),
    "where_masked_fill": lambda: (
        f(lambda x: torch.where(x > 0, x, x * 0.1) + x.masked_fill(x < -0.5, 2.0)),
        [R(3, 5)],
    ),
    "compare_tensor": lambda: (
        f(
            lambda x, y: (
                (x > y).float()
                + (x < y).float() * 2
                + (x >= y).float() * 4
                + (x <= y).float() * 8
                + (x == y).float() * 16
                + (x != y).float() * 32
            )
        ),
        [torch.tensor([1.0, 2.0, 3.0]), torch.tensor([2.0, 2.0, 2.0])],
    ),
    "compare_scalar": lambda: (
        f(
            lambda x: (
                (x > 2).float()
                + (x < 2).float() * 2
                + (x >= 2).float() * 4
                + (x <= 2).float() * 8
                + (x == 2).float() * 16
                + (x != 2).float() * 32
            )
        ),
        [torch.tensor([1.0, 2.0, 3.0])],
    ),
    "logical": lambda: (
        f(
            lambda x, y: (
                torch.logical_and(x > 0, y > 0).float()
                + torch.logical_or(x > 0, y > 0).float() * 2
                + torch.logical_xor(x > 0, y > 0).float() * 4
                + torch.logical_not(x > 0).float() * 8
            )
        ),
        [R(4, 3), R(4, 3)],
    ),
    "bitwise_bool": lambda: (
        f(
            lambda x, y: (
                ((x > 0) & (y > 0)).float()
                + ((x > 0) | (y > 0)).float() * 2
                + ((x > 0) ^ (y > 0)).float() * 4
                + (~(x > 0)).float() * 8
            )
        ),
        [R(4, 3), R(4, 3)],
    ),
    # Unpacking 4-bit codes (nvfp4): & (2^k - 1) and >> k on uint8 are exact as x mod 2^k and
    # floor(x / 2^k); every byte value 0..255 once.
    "uint8_nibbles": lambda: (
        f(
            lambda p: (
                (p & 0x0F).float() * 16
                + (p >> 4).float()
                + (p & 0xFF).float() * 1000
                + torch.bitwise_right_shift(p, 2).float() * 7
            )
        ),
        [torch.arange(256, dtype=torch.uint8).reshape(16, 16)],
    ),
    # The same on int32, negative values included (two's complement): & -2^k keeps the high
    # bits (an fp32's sign and exponent: & -8388608), & (2^k - 1) the low ones (never
    # negative), >> k is floor(x / 2^k); the extremes of int32 are exact.
    "int32_bits": lambda: (
        f(lambda x: (x & -8388608, x & 0x7FFFFF, x >> 23, x & 0xFF)),
        [
            torch.tensor(
                [-(2**31), 2**31 - 1, -1, 0, 12345678, -8388609, 8388608, -255],
                dtype=torch.int32,
            )
        ],
    ),
    "fmod_remainder": lambda: (
        f(
            lambda x, y: (
                torch.fmod(x, 1.5)
                + torch.remainder(x, 1.5) * 2
                + torch.fmod(x, y) * 3
                + torch.remainder(x, y) * 5
            )
        ),
        [R(3, 5) * 4, P(3, 5)],
    ),
    "floor_trunc_divide": lambda: (
        f(
            lambda x, y: (
                torch.div(x, y, rounding_mode="floor")
                + torch.div(x, y, rounding_mode="trunc") * 2
                + torch.div(x, 0.7, rounding_mode="floor") * 3
                + torch.div(x, 0.7, rounding_mode="trunc") * 5
                + x // y * 7
            )
        ),
        [R(3, 5) * 4, P(3, 5)],
    ),
    "clamp_tensor": lambda: (
        f(
            lambda x, lo, hi: (
                torch.clamp(x, lo, hi) + torch.clamp(x, min=lo) * 2 + torch.clamp(x, max=hi) * 3
            )
        ),
        [R(3, 4), R(4) - 0.5, R(3, 1) + 0.5],
    ),
    "int_arithmetic": lambda: (
        f(lambda i, j: (i * 3 + j - 1) // 2 + i % 3),
        [I(10, 3, 4), I(5, 4)],
    ),
    "to_copy_dtypes": lambda: (
        f(lambda x: x.half().float() + x.to(torch.bfloat16).float() + x.double().float()),
        [R(3, 4)],
        (1e-2, 1e-2),
    ),
    "int_to_float": lambda: (f(lambda i: i.float() / 3 + (i > 2).long()), [I(6, 2, 5)]),
    "bool_mask_cast": lambda: (f(lambda x: (x > 0).to(torch.float32) * x), [R(3, 3)]),
    # view(dtype): the fp32 bits plus one ulp (exact integer arithmetic) read back as fp32;
    # 4 uint8 bytes of a row as one fp32; an fp32 as its 4 bytes (the last dim 3 -> 12).
    "view_dtype_bits": lambda: (
        f(
            lambda x, b: (
                (x.abs().view(torch.int32) + 1).view(torch.float32) * 2,
                b.view(torch.float32).view(torch.int32),
                x.view(torch.uint8),
            )
        ),
        [R(2, 3), torch.randint(0, 256, (2, 8), dtype=torch.uint8)],
    ),
    # ---------------------------------------------------------------- views
    "view_reshape_flatten": lambda: (
        f(lambda x: x.view(3, 10).reshape(2, 15).flatten() + 1),
        [R(2, 3, 5)],
    ),
    "squeeze_unsqueeze": lambda: (
        f(
            lambda x: (
                x.squeeze(1).unsqueeze(0).squeeze() + x.squeeze((1, 3)).unsqueeze(-1).squeeze(-1)
            )
        ),
        [R(3, 1, 4, 1)],
    ),
    "permute_transpose_t": lambda: (
        f(lambda x, y: x.permute(2, 0, 1).transpose(0, 2).contiguous() * 2 + y.t().sum()),
        [R(2, 3, 4), R(3, 5)],
    ),
    "expand_size1": lambda: (f(lambda x: x.expand(3, 4, 5) * 2), [R(4, 1)]),
    "slice_select": lambda: (
        f(lambda x: x[1:, ::2, -2] + x[0, :2, 1:].sum() + x[..., -1][:, 1:3].sum()),
        [R(3, 5, 4)],
    ),
    "cat_any_dim": lambda: (
        f(lambda x, y: torch.cat([x, y, x], dim=1) * torch.cat([x, x], dim=-1).sum()),
        [R(2, 3, 4), R(2, 1, 4)],
    ),
    # torch.cat promotes fp16 + fp32 to fp32: the lowering casts before the IR's concat,
    # which takes one dtype (once, the executor copied fp32 into an fp16 output: heap overrun).
    "cat_mixed_dtypes": lambda: (
        f(lambda x, y: torch.cat([x, y.half()], dim=1) * 2),
        [R(2, 3), R(2, 2)],
    ),
    "stack_any_dim": lambda: (
        f(lambda x, y: torch.stack([x, y], dim=1) + torch.stack([x, y], dim=-1).sum()),
        [R(2, 3), R(2, 3)],
    ),
    "split_chunk": lambda: (
        f(
            lambda x: (
                torch.split(x, 2, dim=1)[2] * 2
                + torch.chunk(x, 3, dim=1)[1]
                + x.split([1, 2, 2], dim=1)[2]
            )
        ),
        [R(3, 5)],
    ),
    "unbind": lambda: (f(lambda x: x.unbind(1)[2] + x.unbind(0)[1][1]), [R(2, 4)]),
    "pad_constant": lambda: (
        f(lambda x: F.pad(x, (1, 2, 0, 1), value=0.5) + 1),
        [R(2, 3, 4)],
    ),
    # A negative pad crops that side (RWKV's token shift is F.pad(x, (0, 0, 1, -1))). Shapes
    # from x [2, 3, 5]: (-1, 2, 1, -2) gives [2, 3 + 1 - 2, 5 - 1 + 2] = [2, 2, 6]; (0, 1, 1,
    # -1) gives [2, 3, 6], cut to [2, 2, 6].
    "pad_crop": lambda: (
        f(lambda x: F.pad(x, (-1, 2, 1, -2), value=0.5) + F.pad(x, (0, 1, 1, -1))[:, :2]),
        [R(2, 3, 5)],
    ),
    # Rotary embedding in complex form (Meta's Llama, DeepSeek-V2): computed over pairs of
    # reals (frontend/complex_pairs.py).
    "rope_complex": lambda: (
        f(
            lambda x, angles: torch.view_as_real(
                torch.view_as_complex(x.reshape(2, 8, 4, 8, 2))
                * torch.polar(torch.ones_like(angles), angles).view(1, 8, 1, 8)
            ).flatten(3)
        ),
        [R(2, 8, 4, 16), R(8, 8)],
    ),
    # Views, sums, real scalars and real tensors on complex values.
    "complex_views_and_sums": lambda: (
        f(
            lambda x, r: torch.view_as_real(
                (z := torch.view_as_complex(x)).permute(1, 0).unsqueeze(0).expand(2, 4, 3)
                * r.unsqueeze(-1)
                + (z * 2.0)[1:, 0:3].select(0, 0).clone()
                - z.transpose(0, 1)[:, 0:1].unsqueeze(0)
            )
        ),
        [R(3, 4, 2), R(2, 4)],
    ),
    "pad_reflect_replicate": lambda: (
        f(
            lambda x: (
                F.pad(x, (2, 1, 1, 2), mode="reflect") + F.pad(x, (2, 1, 1, 2), mode="replicate")
            )
        ),
        [R(1, 2, 4, 5)],
    ),
    "pad_circular": lambda: (f(lambda x: F.pad(x, (1, 2), mode="circular") * 2), [R(2, 3, 5)]),
    "clone_detach_alias": lambda: (f(lambda x: x.clone().detach() + x), [R(4)]),
    "in_place": lambda: (InPlace(), [R(3, 5)]),
    "masked_assign": lambda: (MaskedAssign(), [R(3, 4)]),
    "stochastic_depth": lambda: (StochasticDepth(), [R(4, 6)]),
    "sub_div_scalar": lambda: (
        f(lambda x: torch.ops.aten.div.Scalar(torch.ops.aten.sub.Scalar(x, 1.5), 4.0)),
        [R(3, 4)],
    ),
    # A restride of a pooled [N, C, 1, 1] tensor (a view) and a windowed read with an offset.
    "as_strided": lambda: (
        f(
            lambda x: (
                torch.as_strided(x.mean((2, 3), keepdim=True), (2, 1, 1, 8), (8, 1, 1, 1)),
                torch.as_strided(x, (2, 8, 3, 3), (128, 16, 4, 1), 5),
            )
        ),
        [R(2, 8, 4, 4)],
    ),
    "buffer_mask": lambda: (BufferModel(), [R(2, 5, 5)]),
    # ---------------------------------------------------------------- creation
    "full_zeros_ones": lambda: (
        f(
            lambda x: (
                x
                + torch.full((3, 4), 2.0, device=x.device)
                + torch.zeros(4, device=x.device)
                + torch.ones(3, 1, device=x.device)
                + torch.zeros_like(x)
                + torch.ones_like(x)
                + torch.full_like(x, 3.0)
            )
        ),
        [R(3, 4)],
    ),
    "arange_tril": lambda: (
        f(lambda x: torch.tril(x) + torch.triu(x, 1) * 2 + torch.arange(4, device=x.device) * 0.5),
        [R(3, 4)],
    ),
    "arange_forms": lambda: (
        f(
            lambda x: (
                x
                + torch.arange(5, device=x.device)
                + torch.arange(2, 7, device=x.device)
                + torch.arange(1, 11, 2, device=x.device)
            )
        ),
        [R(5)],
    ),
    # ---------------------------------------------------------------- linear algebra
    "linear": lambda: (nn.Linear(5, 3), [R(4, 5)]),
    "linear_nobias_3d": lambda: (nn.Linear(5, 3, bias=False), [R(2, 4, 5)]),
    "mm_matmul": lambda: (f(lambda a, b: a @ b + torch.mm(a, b)), [R(3, 4), R(4, 5)]),
    # A transposed first operand, alone and with a transposed second (mm_tn, mm_tt) and
    # batched (bmm_tn, bmm_tt): read in place, as cuBLAS does.
    "mm_transposed_operands": lambda: (
        f(
            lambda a, b, c, d, e: (
                (a.t() @ b).sum()
                + (a.t() @ c.t()).sum()
                + torch.bmm(d.transpose(1, 2), e.transpose(1, 2)).sum()
                + torch.bmm(d.transpose(1, 2), e.transpose(1, 2).contiguous()).sum()
            )
        ),
        [R(4, 3), R(4, 5), R(5, 4), R(2, 4, 3), R(2, 5, 4)],
    ),
    "bmm_4d_matmul": lambda: (
        f(lambda a, b, c: torch.bmm(a, b).sum() + torch.matmul(c, c.transpose(-1, -2))),
        [R(2, 3, 4), R(2, 4, 5), R(2, 2, 3, 4)],
    ),
    "addmm_scaled": lambda: (
        f(
            lambda bias, a, b: (
                torch.addmm(bias, a, b, beta=0.5, alpha=2.0)
                + torch.addmm(bias, a, b.t().contiguous().t(), beta=2.0)
            )
        ),
        [R(5), R(3, 4), R(4, 5)],
    ),
    # torch._scaled_mm of fp8 codes (frontend/narrow.py): per-tensor scales into fp32, row-wise
    # ([16, 1] and [1, 8], positive) into bf16. NVFP4 has no CPU kernel to compare with:
    # test_quantised_reference.py checks it against codes decoded by hand.
    "scaled_mm_fp8": lambda: (
        f(
            lambda a, b, sa, sb, ra, rb: (
                torch._scaled_mm(a, b.t(), sa, sb, out_dtype=torch.float32)
                + torch._scaled_mm(a, b.t(), ra, rb, out_dtype=torch.bfloat16).float()
            )
        ),
        [
            R(16, 32).to(torch.float8_e4m3fn),
            R(8, 32).to(torch.float8_e4m3fn),
            torch.tensor(0.5),
            torch.tensor(2.0),
            R(16, 1).abs() + 0.5,
            R(1, 8).abs() + 0.5,
        ],
    ),
    # torch._int_mm: int8 (or uint8, torchao's CPU path) times int8 into int32, exact.
    "int_mm": lambda: (
        f(lambda a, u, b: torch._int_mm(a, b.t()).float() + torch._int_mm(u, b.t()).float()),
        [
            torch.randint(-128, 128, (32, 64), dtype=torch.int8),
            torch.randint(0, 256, (32, 64), dtype=torch.uint8),
            torch.randint(-128, 128, (16, 64), dtype=torch.int8),
        ],
    ),
    "addmm_full_bias": lambda: (
        f(lambda c, a, b: torch.addmm(c, a, b)),
        [R(3, 5), R(3, 4), R(4, 5)],
    ),
    "baddbmm_einsum": lambda: (
        f(
            lambda c, a, b: (
                torch.baddbmm(c, a, b)
                + torch.einsum("bij,bjk->bik", a, b)
                + torch.einsum("bik,bjk->bij", torch.einsum("bij->bji", b), a).sum()
            )
        ),
        [R(2, 3, 5), R(2, 3, 4), R(2, 4, 5)],
    ),
    # ---------------------------------------------------------------- convolution
    "conv1d": lambda: (nn.Conv1d(3, 4, 3, stride=2, padding=1), [R(2, 3, 9)]),
    "conv2d_grouped_dilated": lambda: (
        nn.Conv2d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2),
        [R(1, 4, 7, 6)],
    ),
    "conv2d_depthwise_nobias": lambda: (nn.Conv2d(3, 3, 3, groups=3, bias=False), [R(2, 3, 5, 5)]),
    "conv3d": lambda: (nn.Conv3d(2, 3, (2, 3, 3), stride=(1, 2, 1), padding=1), [R(1, 2, 4, 5, 5)]),
    "conv3d_dilated": lambda: (nn.Conv3d(2, 2, 2, dilation=2), [R(1, 2, 5, 5, 5)]),
    "conv_transpose1d": lambda: (nn.ConvTranspose1d(3, 2, 3, stride=2, padding=1), [R(2, 3, 5)]),
    "conv_transpose2d": lambda: (
        nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1, groups=2),
        [R(1, 4, 3, 4)],
    ),
    "conv_transpose3d": lambda: (
        nn.ConvTranspose3d(2, 3, 3, stride=2, padding=1, output_padding=1),
        [R(1, 2, 2, 3, 2)],
    ),
    # ---------------------------------------------------------------- reductions
    "sum_mean": lambda: (
        f(lambda x: x.sum(1) + x.mean((0, 2)).sum() + x.sum() + x.mean(-1, keepdim=True).sum()),
        [R(3, 4, 5)],
    ),
    "sum_noncontiguous_dims": lambda: (f(lambda x: x.sum((0, 2))), [R(3, 4, 5)]),
    "sum_bool_int": lambda: (f(lambda x: (x > 0).sum(1) + x.long().sum()), [R(4, 6) * 3]),
    "amax_amin_prod": lambda: (
        f(lambda x: x.amax(1) + x.amin((0, 1)) + x.prod(2).sum()),
        [R(2, 3, 4)],
    ),
    "argmax_argmin": lambda: (
        f(lambda x: x.argmax(1, keepdim=True) * 10 + x.argmin(0, keepdim=True) + x.argmax()),
        [R(4, 5)],
    ),
    "max_min_dim_values": lambda: (
        f(lambda x: x.max(1, keepdim=True)[0] + x.min(dim=0, keepdim=True).values),
        [R(3, 5)],
    ),
    "max_min_dim_indices": lambda: (
        f(lambda x: (x.max(-1)[1], x.min(1)[1], x.max(1).values)),
        [R(3, 5)],
    ),
    "max_min_all": lambda: (f(lambda x: torch.max(x) - torch.min(x)), [R(3, 5)]),
    "var_std": lambda: (
        f(
            lambda x: (
                x.var(1)
                + x.std(1, unbiased=False)
                + torch.var(x, (0, 2), correction=0).sum()
                + x.var(-1, keepdim=True).sum()
            )
        ),
        [R(3, 4, 5)],
    ),
    "var_mean": lambda: (f(lambda x: torch.var_mean(x, 1)), [R(3, 6)]),
    "any_all": lambda: (
        f(
            lambda x: (
                (x > 1).any(1).float()
                + (x > -1).all(1).float() * 2
                + (x > 2).any().float() * 4
                + (x > -3).all().float() * 8
            )
        ),
        [R(4, 5)],
    ),
    "logsumexp": lambda: (f(lambda x: torch.logsumexp(x, 1)), [R(3, 5)]),
    "vector_norm": lambda: (
        f(
            lambda x: (
                torch.linalg.vector_norm(x, dim=1)
                + torch.linalg.vector_norm(x, 1, dim=1)
                + torch.linalg.vector_norm(x, float("inf"), dim=1)
                + torch.linalg.vector_norm(x, 3, dim=1)
            )
        ),
        [R(3, 5)],
    ),
    "normalize_cosine": lambda: (
        f(lambda x, y: F.normalize(x, dim=1) + F.cosine_similarity(x, y).unsqueeze(1)),
        [R(3, 5), R(3, 5)],
    ),
    "softmax_log_softmax": lambda: (
        f(lambda x: F.softmax(x, 1) + F.log_softmax(x, -1) + F.softmax(x, 0)),
        [R(3, 5)],
    ),
    "cumsum_cumprod": lambda: (f(lambda x: x.cumsum(1) + x.cumprod(0)), [R(3, 4)]),
    # ---------------------------------------------------------------- normalisation
    "layer_norm": lambda: (nn.LayerNorm(5), [R(2, 3, 5)]),
    "layer_norm_2d_noaffine": lambda: (
        f(
            lambda x: (
                F.layer_norm(x, (3, 5))
                + F.layer_norm(x, (5,), weight=torch.ones(5, device=x.device) * 2)
            )
        ),
        [R(2, 3, 5)],
    ),
    "rms_norm": lambda: (nn.RMSNorm(5), [R(3, 5)]),
    "batch_norm_train": lambda: (nn.BatchNorm2d(3), [R(2, 3, 4, 5)]),
    "batch_norm_eval": lambda: (nn.BatchNorm1d(3).eval(), [R(4, 3)]),
    "batch_norm_no_affine": lambda: (nn.BatchNorm1d(3, affine=False), [R(4, 3, 2)]),
    "batch_norm_no_stats": lambda: (
        nn.BatchNorm2d(3, track_running_stats=False),
        [R(2, 3, 2, 3)],
    ),
    "group_norm": lambda: (nn.GroupNorm(2, 4), [R(2, 4, 3, 3)]),
    "instance_norm": lambda: (nn.InstanceNorm2d(3), [R(2, 3, 4, 4)]),
    "instance_norm_affine": lambda: (nn.InstanceNorm1d(3, affine=True), [R(2, 3, 5)]),
    # ---------------------------------------------------------------- pooling
    "max_pool2d": lambda: (nn.MaxPool2d(3, 2, padding=1), [R(2, 3, 7, 6)]),
    "max_pool2d_ceil_dilated": lambda: (
        nn.MaxPool2d(2, 2, ceil_mode=True, dilation=(1, 2)),
        [R(1, 2, 5, 7)],
    ),
    "max_pool1d": lambda: (nn.MaxPool1d(3, 2), [R(2, 3, 9)]),
    "max_pool3d": lambda: (nn.MaxPool3d(2, padding=1), [R(1, 2, 3, 4, 5)]),
    "avg_pool2d": lambda: (nn.AvgPool2d(3, 2, padding=1), [R(2, 3, 7, 6)]),
    "avg_pool2d_ceil_nopad_count": lambda: (
        f(
            lambda x: (
                F.avg_pool2d(x, 3, 2, padding=1, ceil_mode=True)
                + F.avg_pool2d(x, 3, 2, padding=1, ceil_mode=True, count_include_pad=False)
            )
        ),
        [R(1, 2, 6, 8)],
    ),
    "avg_pool2d_divisor": lambda: (
        f(lambda x: F.avg_pool2d(x, 2, divisor_override=3)),
        [R(1, 2, 4, 6)],
    ),
    "avg_pool1d": lambda: (nn.AvgPool1d(2), [R(2, 3, 9)]),
    "avg_pool3d": lambda: (
        f(
            lambda x: (
                F.avg_pool3d(x, 2, padding=1)
                + F.avg_pool3d(x, 2, padding=1, count_include_pad=False)
            )
        ),
        [R(1, 2, 3, 4, 5)],
    ),
    "adaptive_avg_pool2d": lambda: (
        f(
            lambda x: (
                F.adaptive_avg_pool2d(x, (3, 2)).sum()
                + F.adaptive_avg_pool2d(x, 1).sum()
                + F.adaptive_avg_pool2d(x, (4, 3))
            )
        ),
        [R(2, 3, 7, 6)],
    ),
    "adaptive_avg_pool1d_3d": lambda: (
        f(
            lambda x, y: (
                F.adaptive_avg_pool1d(x, 4).sum()
                + F.adaptive_avg_pool3d(y, (2, 3, 2)).sum()
                + F.adaptive_avg_pool3d(y, (2, 2, 2)).sum()
            )
        ),
        [R(2, 3, 9), R(1, 2, 4, 5, 4)],
    ),
    "adaptive_max_pool2d": lambda: (
        f(
            lambda x: (
                F.adaptive_max_pool2d(x, (3, 4)).sum()
                + F.adaptive_max_pool2d(x, 1).sum()
                + F.adaptive_max_pool2d(x, (7, 2))
            )
        ),
        [R(2, 3, 7, 6)],
    ),
    "adaptive_max_pool3d": lambda: (
        f(lambda x: F.adaptive_max_pool3d(x, (2, 3, 3))),
        [R(1, 2, 4, 5, 4)],
    ),
    # ---------------------------------------------------------------- upsampling
    "upsample_nearest": lambda: (
        f(
            lambda x: (
                F.interpolate(x, scale_factor=2, mode="nearest")[..., :3, :4].sum()
                + F.interpolate(x, size=(5, 7), mode="nearest").sum()
                + F.interpolate(x, scale_factor=(3, 1), mode="nearest")
            )
        ),
        [R(2, 3, 4, 5)],
    ),
    "upsample_nearest_exact": lambda: (
        f(lambda x: F.interpolate(x, size=(5, 8), mode="nearest-exact")),
        [R(1, 2, 3, 4)],
    ),
    "upsample_nearest_1d_3d": lambda: (
        f(
            lambda x, y: (
                F.interpolate(x, scale_factor=2).sum()
                + F.interpolate(x, size=7).sum()
                + F.interpolate(y, scale_factor=2).sum()
                + F.interpolate(y, size=(3, 5, 2)).sum()
                + F.interpolate(x, size=7, mode="nearest-exact").sum()
                + F.interpolate(y, size=(3, 5, 2), mode="nearest-exact").sum()
            )
        ),
        [R(2, 3, 5), R(1, 2, 2, 3, 2)],
    ),
    "upsample_bilinear": lambda: (
        f(
            lambda x: (
                F.interpolate(x, scale_factor=2, mode="bilinear").sum()
                + F.interpolate(x, size=(7, 3), mode="bilinear", align_corners=True).sum()
                + F.interpolate(x, size=(6, 9), mode="bilinear")
            )
        ),
        [R(2, 3, 4, 5)],
    ),
    "upsample_linear_trilinear": lambda: (
        f(
            lambda x, y: (
                F.interpolate(x, scale_factor=2, mode="linear").sum()
                + F.interpolate(y, size=(3, 5, 2), mode="trilinear", align_corners=True).sum()
                + F.interpolate(y, scale_factor=2, mode="trilinear").sum()
            )
        ),
        [R(2, 3, 5), R(1, 2, 2, 3, 2)],
    ),
    "pixel_shuffle": lambda: (
        f(lambda x: F.pixel_unshuffle(F.pixel_shuffle(x, 2), 2) + F.pixel_shuffle(x, 2).sum()),
        [R(1, 8, 3, 2)],
    ),
    # ---------------------------------------------------------------- indexing
    "embedding": lambda: (nn.Embedding(7, 4), [I(7, 2, 3)]),
    "index_select_any_dim": lambda: (
        f(
            lambda x, i: (
                x.index_select(0, i).sum() + x.index_select(1, i).sum() + x.index_select(2, i)
            )
        ),
        [R(3, 4, 3), torch.tensor([2, 0, 2])],
    ),
    "gather": lambda: (
        f(
            lambda x, i, j: (
                torch.gather(x, 1, i).sum() + torch.gather(x, 0, j).sum() + torch.gather(x, -1, i)
            )
        ),
        [R(3, 4), I(4, 3, 2), I(3, 2, 4)],
    ),
    "gather_3d": lambda: (f(lambda x, i: torch.gather(x, 1, i)), [R(2, 5, 3), I(5, 2, 4, 3)]),
    # a mask from the data, and a row mask broadcast over the last dim (a VLM's image tokens)
    "masked_scatter": lambda: (
        f(
            lambda x, s: (
                x.masked_scatter(x > 0, s).sum(0)
                + x.masked_scatter((x[:, :1] > 0).expand(3, 4), s * 2).sum(0)
            )
        ),
        [R(3, 4), R(12)],
    ),
    # random draws: generated inputs fed with the values PyTorch drew
    "random": lambda: (
        f(
            lambda x: (
                x
                + torch.rand_like(x)
                + torch.randn(3, 4) * torch.randn_like(x)
                - torch.rand(3, 4)
                + torch.empty(3, 4).uniform_(-1, 1)
                + torch.empty(3, 4).normal_(2.0, 0.5)
                + torch.normal(2.0, 0.5, size=(3, 4))
            )
        ),
        [R(3, 4)],
    ),
    # a sampler's draw: the sampled indices are a generated input too, and what follows
    # gathers by them (the IR runs on the indices PyTorch drew)
    "multinomial": lambda: (
        f(lambda x, p: x.gather(1, torch.multinomial(p.softmax(-1), 2)) * 2),
        [R(3, 5), R(3, 5)],
    ),
    # values and indices, largest along the middle dim and smallest along the last
    "topk": lambda: (
        f(
            lambda x: (
                torch.topk(x, 2, dim=1)[0].sum()
                + torch.topk(x, 3, dim=1)[1].sum()
                + torch.topk(x, 2, largest=False)[0]
            )
        ),
        [R(2, 5, 3)],
    ),
    # distinct indices per row (a duplicate's winner is unspecified in PyTorch); src larger
    # than the index (PyTorch reads its leading corner); the scalar form
    "scatter": lambda: (
        f(
            lambda x, src: (
                x.scatter(1, torch.tensor([[0, 3], [4, 1], [2, 0]]), src).sum()
                + x.scatter(0, torch.tensor([[2, 0, 1, 0, 2]]), 7.0)
            )
        ),
        [R(3, 5), R(3, 4)],
    ),
    # Floats (no ties) both ways and along dim 0; integers with ties by a stable sort (ties
    # in index order, as the `topk` builtin orders them); NaN last ascending, first descending.
    "sort": lambda: (
        f(
            lambda x, i: (
                *torch.sort(x),
                *torch.sort(x, dim=0, descending=True),
                torch.argsort(x, dim=1, descending=True),
                *torch.sort(i, stable=True),
                torch.argsort(i, dim=0, stable=True, descending=True),
                *torch.sort(torch.where(x > 1.0, float("nan"), x), dim=1),
            )
        ),
        [R(5, 6), I(3, 5, 6)],
    ),
    # Ties (integer-valued floats) take the later position; a NaN is kept once met.
    "cummax_cummin": lambda: (
        f(
            lambda x: (
                *torch.cummax(torch.round(x), dim=1),
                *torch.cummin(x, dim=0),
                *torch.cummax(torch.where(x > 1.0, float("nan"), x), dim=1),
            )
        ),
        [R(4, 7)],
    ),
    # max_unpool2d: the pooling indices (max_pool2d_idx) plus each plane's offset, then
    # index_put into zeros (a scatter).
    "max_unpool2d": lambda: (
        f(lambda x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2)),
        [R(2, 3, 8, 8)],
    ),
    # Bags of one size (a 2-D input): sum, mean, max, and a weighted sum.
    "embedding_bag": lambda: (
        f(
            lambda i, w, t: (
                F.embedding_bag(i, t, mode="sum"),
                F.embedding_bag(i, t, mode="mean"),
                F.embedding_bag(i, t, mode="max"),
                F.embedding_bag(i, t, mode="sum", per_sample_weights=w),
            )
        ),
        [I(9, 4, 3), R(4, 3), R(9, 5)],
    ),
    # Duplicate indices are summed (no unspecified winner); src larger than the index; alpha
    # scales the source; index_put with accumulate is index_add along dim 0; an integer
    # x[i] = v overwrites rows (distinct i).
    "scatter_add": lambda: (
        f(
            lambda x, src, i: (
                x.scatter_add(1, torch.tensor([[0, 0], [4, 1], [2, 2]]), src),
                x.scatter_reduce(0, i, src[:2, :5], reduce="sum"),
                x.index_add(0, torch.tensor([2, 0, 2]), src[:, :5] * 1.5, alpha=2.0),
                x.index_put((torch.tensor([1, 1]),), src[:2, :5], accumulate=True),
                x.index_put((torch.tensor([[2], [0]]),), src[0:1, :5], accumulate=True),
                x.index_put((torch.tensor([2, 0]),), src[0, :5]),
                torch.ops.aten.index_put(x, [None, torch.tensor([4, 1, 4])], src[:, :3], True),
                (lambda y: (y.__setitem__((slice(None), torch.tensor([3, 0])), 2.0), y)[1])(
                    x.clone()
                ),
            )
        ),
        [R(3, 5), R(3, 6), I(3, 2, 5)],
    ),
    "index_tensor": lambda: (
        f(
            lambda x, i, j: (
                x[i].sum()
                + x[:, j].sum()
                + x[i[:2], j[:2]].sum()
                + x[:, :, j[1:3] % 3].sum()
                + x[i.view(2, 2)][..., 1]
            )
        ),
        [R(3, 4, 3), torch.tensor([2, -1, 0, 1]), torch.tensor([3, 0, -2, 1])],
    ),
    # x[i, j] = v (or += v) with index tensors of adjacent dims: the rows of the merged dims
    # overwritten or added to (duplicate (i, j) pairs summed with accumulate; distinct pairs
    # where overwritten, so no winner is unspecified), broadcast indices and values, a
    # leading full slice, three indices.
    "index_put_rows": lambda: (
        f(
            lambda x, v, i, j: (
                x.index_put((i, i), x[0, :2] * 2, accumulate=True),
                x.index_put((torch.tensor([0, 2, 1]), torch.tensor([3, -1, 0])), v[0, :3]),
                x.index_put((torch.tensor([[0], [2]]), torch.tensor([1, 3])), v[:2, :2]),
                torch.ops.aten.index_put(
                    v.view(1, 3, 4).expand(2, 3, 4).clone(), [None, i, j], v[0, :2], True
                ),
                torch.ops.aten.index_put(
                    x.view(3, 2, 2), [torch.tensor([2, 0]), torch.tensor([1, 0]), j % 2], v[1, 0]
                ),
            )
        ),
        [R(3, 4), R(3, 4), I(3, 2), I(4, 2)],
    ),
    "index_tensor_nonadjacent": lambda: (
        f(lambda x, i, j: x[i, :, j] + x[i, 1:3, :][:, :, j].sum()),
        [R(3, 4, 5), torch.tensor([2, 0, 1]), torch.tensor([4, 0, 3])],
    ),
    "index_tensor_3": lambda: (
        f(lambda x, i, j, k: x[i, j, k]),
        [R(3, 4, 5), I(3, 2, 3), I(4, 3), I(5, 1, 3)],
    ),
    "flip_roll": lambda: (
        f(
            lambda x: (
                x.flip(1)
                + x.flip((0, 2)).sum()
                + x.flip((0, 1, 2)).sum()
                + torch.roll(x, 2, 1)
                + torch.roll(x, (1, -1), (0, 2))
            )
        ),
        [R(2, 3, 4)],
    ),
    "unfold": lambda: (
        f(lambda x: x.unfold(1, 3, 2).sum() + x.unfold(-1, 2, 1).sum() + F.unfold(x, 2)),
        [R(1, 3, 5, 4)],
    ),
    "repeat_tile": lambda: (
        f(lambda x: x.repeat(2, 1, 3) + x.repeat(2, 1, 3).sum() + torch.tile(x, (2,)).sum()),
        [R(3, 2)],
    ),
    "diagonal_trace": lambda: (
        f(
            lambda x, y: (
                torch.diagonal(x, dim1=-2, dim2=-1).sum()
                + torch.diagonal(x, 1, 0, 2).sum()
                + torch.diagonal(x, -1, 2, 1)
                + torch.trace(y)
            )
        ),
        [R(2, 4, 3), R(3, 3)],
    ),
    # ---------------------------------------------------------------- losses
    "cross_entropy": lambda: (
        f(
            lambda x, t: (
                F.cross_entropy(x, t)
                + F.cross_entropy(x, t, reduction="sum")
                + F.nll_loss(F.log_softmax(x, 1), t, ignore_index=2)
            )
        ),
        [R(5, 4), torch.tensor([0, 3, 2, 1, 3])],
    ),
    "cross_entropy_weighted_smoothing": lambda: (
        f(
            lambda x, t, w: (
                F.cross_entropy(x, t, weight=w)
                + F.cross_entropy(x, t, label_smoothing=0.1)
                + F.cross_entropy(x, t, reduction="none").sum()
            )
        ),
        [R(5, 4), torch.tensor([0, 3, 2, 1, 3]), P(4)],
    ),
    "cross_entropy_spatial": lambda: (
        f(lambda x, t: F.cross_entropy(x, t)),
        [R(2, 4, 3, 3), I(4, 2, 3, 3)],
    ),
    "losses_elementwise": lambda: (
        f(
            lambda x, y: (
                F.mse_loss(x, y)
                + F.l1_loss(x, y)
                + F.smooth_l1_loss(x, y)
                + F.huber_loss(x, y, delta=0.5)
                + F.kl_div(F.log_softmax(x, 1), F.softmax(y, 1), reduction="batchmean")
                + F.binary_cross_entropy_with_logits(x, torch.sigmoid(y))
                + F.binary_cross_entropy(torch.sigmoid(x), torch.sigmoid(y))
                + F.triplet_margin_loss(x, y, x * 0.5)
                + F.hinge_embedding_loss(x, torch.sign(y))
            )
        ),
        [R(4, 5), R(4, 5)],
    ),
    # ---------------------------------------------------------------- composites
    "attention_sdpa": lambda: (
        f(
            lambda q, k, v: (
                F.scaled_dot_product_attention(q, k, v, is_causal=True)
                + F.scaled_dot_product_attention(q, k, v)
            )
        ),
        [R(2, 2, 5, 4), R(2, 2, 5, 4), R(2, 2, 5, 4)],
    ),
    "multihead_attention": lambda: (
        m(lambda mha, x: mha(x, x, x)[0], nn.MultiheadAttention(6, 2, batch_first=True)),
        [R(2, 3, 6)],
    ),
    # torch.fft over pairs of reals: rfft (zero-padded) and its normalisation, irfft,
    # fft of a real tensor (a two-sided r2c), fftn and ifft (c2c both ways), magnitudes.
    "fft_transforms": lambda: (
        f(
            lambda x: (
                torch.view_as_real(torch.fft.rfft(x, n=16) / 16),
                torch.fft.irfft(torch.fft.rfft(x) * 2, n=8),
                torch.view_as_real(torch.fft.fft(x)),
                torch.fft.ifft(torch.fft.fftn(x, dim=(-2, -1), norm="ortho")).real,
                torch.fft.rfft(x, norm="forward").abs(),
            )
        ),
        [R(2, 3, 8)],
    ),
    "lstm": lambda: (_lstm(), [R(2, 3, 4)]),
    "gru_bidirectional": lambda: (_gru(), [R(2, 3, 4)]),
    "rnn_relu_two_layers": lambda: (_rnn_relu(), [R(3, 2, 4)]),
    "rnn_cell": lambda: (m(lambda cell, x: cell(x), nn.RNNCell(4, 3)), [R(2, 4)]),
    "prelu_glu": lambda: (
        m(lambda prelu, x: prelu(x) + F.glu(torch.cat([x, x * 2], 1), 1), nn.PReLU(3)),
        [R(2, 3, 4)],
    ),
    "dropout_at_expectation": lambda: (
        f(lambda x: F.dropout(x, 0.3) + F.dropout(x, 0.0)),
        [R(3, 4)],
    ),
    "cdist_like": lambda: (
        f(lambda a, b: ((a.unsqueeze(1) - b.unsqueeze(0)) ** 2).sum(-1).sqrt()),
        [R(3, 4), R(2, 4)],
    ),
}

# Operators that the core-ATen capture decomposes; reached by capturing functional ATen
# without the core decompositions (capture_functional), so that their rules are tested too.
ALIAS_CASES = {
    # argsort as captured (core ATen decomposes it into sort): both directions, stable.
    "argsort": lambda: (
        f(lambda x: (torch.argsort(x, dim=0), torch.argsort(x, descending=True, stable=True))),
        [R(4, 5)],
    ),
    # index_add as captured (core ATen decomposes it into mul + index_put(accumulate)):
    # along dim 1, with duplicates and alpha
    "index_add": lambda: (
        f(lambda x, s: x.index_add(1, torch.tensor([3, 0, 3], device=x.device), s, alpha=-0.5)),
        [R(2, 5), R(2, 3)],
    ),
    "t_transpose_squeeze_detach": lambda: (
        f(lambda x: x.t().transpose(0, 1).detach().unsqueeze(1).squeeze(1).squeeze() * 2),
        [R(3, 1)],
    ),
    "split_sum": lambda: (f(lambda x: x.split(2, 1)[1] + x.sum()), [R(3, 5)]),
    "zeros_ones_arange": lambda: (
        f(
            lambda x: (
                x
                + torch.zeros(3, device=x.device)
                + torch.ones(3, device=x.device)
                + torch.zeros_like(x)
                + torch.ones_like(x) * 2
                + torch.arange(3, device=x.device)
                + torch.arange(1, 4, device=x.device)
            )
        ),
        [R(2, 3)],
    ),
    "softplus_floor_divide_rsub": lambda: (
        f(lambda x: F.softplus(x) + F.softplus(x, beta=2, threshold=3) + x // 0.7 + (2 - x)),
        [R(3, 4) * 3],
    ),
    "setitem_select_scatter": lambda: (
        f(lambda x: (lambda y: (y.__setitem__((slice(None), 1), 0.5), y)[1])(x.clone())),
        [R(3, 4)],
    ),
    "upsample_variants": lambda: (
        f(
            lambda x, y: (
                F.interpolate(x, scale_factor=2).sum()
                + F.interpolate(x, size=7).sum()
                + F.interpolate(x, size=7, mode="nearest-exact").sum()
                + F.interpolate(x, size=8, mode="linear", align_corners=True).sum()
                + F.interpolate(y, scale_factor=2).sum()
                + F.interpolate(y, size=(3, 5, 2), mode="nearest-exact").sum()
                + F.interpolate(y[0], size=(5, 2), mode="nearest-exact").sum()
                + F.interpolate(y, size=(3, 5, 2), mode="trilinear").sum()
            )
        ),
        [R(2, 3, 5), R(1, 2, 2, 3, 2)],
    ),
}

# Operators that are known not to lower, with the message they must give.
ERROR_CASES = {
    "nonzero": (lambda: (f(lambda x: torch.nonzero(x > 0)), [R(3, 4)]), "size depends"),
    "embedding_bag_offsets": (
        lambda: (
            f(lambda i, t: F.embedding_bag(i, t, torch.tensor([0, 2], device=i.device))),
            [I(9, 5), R(9, 4)],
        ),
        "embedding_bag with bags of data-dependent sizes",
    ),
    "scatter_reduce_amax": (
        lambda: (f(lambda x, i: x.scatter_reduce(1, i, x, reduce="amax")), [R(3, 4), I(4, 3, 4)]),
        "scatter_reduce with reduce='amax', include_self=True is not expressible",
    ),
    "index_put_nonadjacent": (
        lambda: (
            f(lambda x, i: torch.ops.aten.index_put(x, [i, None, i], x[0, 0, :2] * 2, True)),
            [R(3, 4, 3), I(3, 2)],
        ),
        "with several index tensors",
    ),
}


def _build(factory):
    torch.manual_seed(0)
    built = factory()
    model, inputs = built[0], built[1]
    tol = built[2] if len(built) > 2 else (RTOL, ATOL)
    return model, inputs, tol


def capture_functional(model, inputs) -> Capture:
    """Functional ATen without the core decompositions."""
    import warnings

    args = tuple(torch.empty(t.shape, dtype=t.dtype, device="meta") for t in inputs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exported = torch.export.export(copy.deepcopy(model).to("meta"), args)
        return Capture(exported.run_decompositions({}), "")


# Operators only a training step's joint graph has (convolution_backward): lowered from
# solar.analyze(..., training=True)'s capture; their values are checked against autograd in
# tests/python/test_training.py.
TRAINING_CASES = {
    # Overlapping windows (ResNet's stem): the backward scatters to the forward's indices.
    "max_pool_backward": lambda: (
        m(lambda s, x: s(x), nn.Sequential(nn.Conv2d(2, 3, 3), nn.MaxPool2d(3, 2, 1))),
        [R(2, 2, 9, 9)],
    ),
    # Bags of one size: the forward (_embedding_bag with grad) and its weight gradient.
    "embedding_bag_backward": lambda: (
        m(lambda e, i: e(i), nn.EmbeddingBag(9, 4, mode="mean")),
        [I(9, 3, 5)],
    ),
    "conv2d_backward": lambda: (
        m(lambda c, x: c(x), nn.Conv2d(4, 6, 3, stride=2, padding=1)),
        [R(2, 4, 9, 9)],
    ),
}


@functools.cache
def lowered_case(name):
    if name in TRAINING_CASES:
        model, inputs, tol = _build(TRAINING_CASES[name])
        return model, inputs, tol, lower(capture_module(model, inputs, training=True))
    if name in CASES:
        model, inputs, tol = _build(CASES[name])
        # A copy on the meta device: the model keeps its real weights for the reference run.
        lowered = lower(capture_module(copy.deepcopy(model).to("meta"), inputs))
    else:
        model, inputs, tol = _build(ALIAS_CASES[name])
        lowered = lower(capture_functional(model, inputs))
    return model, inputs, tol, lowered


def run_lowered(model, inputs, lowered, drawn=(), state=None):
    """Runs the lowered program with the interpreter on PyTorch's inputs and weights (`state`:
    the state_dict before a forward pass updated its buffers), and the random tensors
    PyTorch's forward drew (`drawn`, in order)."""
    program = load_lowered(lowered)
    state = model.state_dict() if state is None else state
    tensors = [t for t in inputs if isinstance(t, torch.Tensor)]
    feeds, constants = {}, None
    for name, kind, target in lowered.params:
        if kind == "random":
            feeds[name] = drawn[target]
            continue
        if kind != "input" and target not in state:
            # A tensor made from Python data in forward (y[:, 0] = 0.0 lifts a scalar
            # tensor): captured without values, so taken from a real export.
            if constants is None:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    constants = torch.export.export(model, tuple(inputs)).constants
            feeds[name] = constants[target].detach()
            continue
        feeds[name] = (tensors[target] if kind == "input" else state[target]).detach()
    return solar.run(program, feeds, backend="interpreter")


@pytest.mark.parametrize("name", list(CASES) + list(ALIAS_CASES))
def test_rule_matches_pytorch(name):
    model, inputs, (rtol, atol), lowered = lowered_case(name)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    tape = random_tape()
    with torch.no_grad(), dropout_at_expectation(), tape:
        want = model(*inputs)
    got = run_lowered(model, inputs, lowered, tape.values, before)
    wants = list(want) if isinstance(want, (tuple, list)) else [want]
    # Buffer updates (batch norm's running statistics) follow the outputs: PyTorch's forward
    # pass has just made them.
    state = model.state_dict()
    wants += [state[k] for k in lowered.buffer_outputs]
    assert len(got) == len(wants)
    budgets = output_budgets(solar.trace(load_lowered(lowered)))
    for i, w in enumerate(wants):
        g = got[f"out{i}"]
        # Validation's own criterion (solar/tolerance.py) accepts every rule's output too.
        c = compare(f"out{i}", g, w, ir_dtype(w.dtype), budgets[i])
        assert c.ok, f"{name}: {c.summary()}"
        assert tuple(g.shape) == tuple(w.shape), (name, i, g.shape, w.shape)
        if w.dtype in (torch.int64, torch.int32, torch.bool):
            np.testing.assert_array_equal(g, w.numpy(), err_msg=f"{name} out{i}")
            continue
        w = w.float().numpy()
        scale = max(float(np.abs(w[np.isfinite(w)]).max(initial=0.0)), 1.0)
        np.testing.assert_allclose(
            g.astype(np.float64), w, rtol=rtol, atol=atol * scale, err_msg=f"{name} out{i}"
        )


@pytest.mark.parametrize("name", list(ERROR_CASES))
def test_unsupported_operator_is_a_clear_error(name):
    factory, words = ERROR_CASES[name]
    model, inputs, _ = _build(factory)
    with pytest.raises(UserError) as e:
        lower(capture_module(copy.deepcopy(model).to("meta"), inputs))
    assert "error[lower]" in str(e.value) and words in str(e.value), str(e.value)
    assert "is not expressible in the IR" in str(e.value)


def test_scatter_with_a_smaller_index_is_refused_by_name():
    # torch.scatter allows an index smaller than the input in the other dims; the `scatter`
    # builtin takes an index of the input's shape except along the dim, and says so.
    model, inputs, _ = _build(
        lambda: (f(lambda x, s: x.scatter(1, torch.tensor([[0, 3]]), s)), [R(3, 5), R(3, 4)])
    )
    with pytest.raises(UserError) as e:
        lower(capture_module(copy.deepcopy(model).to("meta"), inputs))
    assert (
        "scatter with an index of shape [1, 2] into [3, 5] along dim 1: only an index of the "
        "input's shape except along dim is supported" in str(e.value)
    )


def test_an_unproduced_result_read_by_another_operator_is_a_user_error():
    # max_unpool3d decomposes into arithmetic on max_pool3d's indices (add the flat offset
    # of each (n, c) volume, then index_put). The lowering produces 3-D pooling indices for
    # no one (2-D: max_pool2d_idx, the `max_unpool2d` case), and the add took them for a
    # number: a TypeError traceback. Now the use is reported.
    model, inputs, _ = _build(
        lambda: (
            f(lambda x: F.max_unpool3d(*F.max_pool3d(x, 2, return_indices=True), 2)),
            [R(1, 2, 4, 4, 4)],
        )
    )
    with pytest.raises(UserError) as e:
        lower(capture_module(copy.deepcopy(model).to("meta"), inputs))
    assert (
        "the indices result of aten.max_pool3d_with_indices.default is used, but the lowering "
        "does not produce it" in str(e.value)
    ), str(e.value)


def test_max_dim_without_indices_is_a_plain_reduction():
    *_, lowered = lowered_case("max_min_dim_values")
    assert "amax_mid(" in lowered.text and "max_dim_mid(" not in lowered.text
    *_, lowered = lowered_case("max_min_dim_indices")
    assert "max_dim_mid(" in lowered.text


def test_complex_rotary_embedding_is_counted_as_eager_runs_it():
    """rope_complex: x [2, 8, 4, 16] as 512 complex values times polar(1, angles [8, 8])."""
    *_, lowered = lowered_case("rope_complex")
    graph = solar.trace(load_lowered(lowered))
    # A complex product is 4 real products and 2 sums: 512 x 6 = 3,072; polar is cos, sin
    # and two products per angle: 64 x 4 = 256.
    assert (graph.total_macs, graph.total_flops) == (0, 3_328)
    # Compulsory: x 4,096 + angles 256 + output 4,096 bytes.
    assert graph.fused_bytes == 8_448
    # Eager, one kernel per source operator: ones_like writes 256; polar reads 2 x 256 and
    # writes 64 complex values (512); the product reads 4,096 + 512 and writes 4,096.
    assert graph.unfused_bytes == 256 + 1_024 + 8_704


class PrecomputedFreqsCis(nn.Module):
    """Meta's Llama reference: freqs_cis = polar(1, angles) precomputed once, a complex tensor
    of the module, sliced in forward."""

    def __init__(self):
        super().__init__()
        angles = torch.outer(torch.arange(8.0), 1.0 / 10000 ** (torch.arange(0, 16, 2) / 16))
        self.freqs_cis = torch.polar(torch.ones(8, 8), angles)

    def forward(self, x):
        xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(xc * self.freqs_cis.view(1, 8, 1, 8)).flatten(3).type_as(x)


def test_a_complex_tensor_of_the_module_is_read_in_its_pair_form():
    r = solar.analyze(PrecomputedFreqsCis(), [R(2, 8, 4, 16)])
    assert r.validation.status == "full", r.validation.detail
    # x 4,096 + freqs_cis 64 complex64 values (512) + output 4,096 bytes.
    assert r.graph.fused_bytes == 8_704
    assert r.graph.total_flops == 512 * 6


def test_a_complex_operator_without_a_pair_form_or_a_complex_output_is_named():
    model = f(lambda x: torch.view_as_real(torch.view_as_complex(x).exp()))
    with pytest.raises(UserError) as e:
        lower(capture_module(model, [R(3, 2)]))
    assert "aten.exp.default makes or reads a complex tensor, and the IR has no complex" in str(
        e.value
    )
    model = f(lambda x: torch.view_as_complex(x) * torch.view_as_complex(x))
    with pytest.raises(UserError) as e:
        lower(capture_module(model, [R(3, 2)]))
    assert "the program returns a complex tensor, and the IR has no complex dtype" in str(e.value)


def test_counts_of_new_kernels():
    """MACs only for real contractions; index arithmetic, pooling and sums of squares are
    vector work."""
    cases = {
        "gather": 0,
        "index_tensor": 0,
        "adaptive_avg_pool2d": 0,
        "upsample_bilinear": 0,
        "var_std": 0,  # sums of squares x * x: both factors index every kept dim (no MAC)
        "vector_norm": 0,
        # N O C times the (output, tap) pairs inside the input per dim (docs/ir.md §7.1):
        # depth 0 <= z + t - 1 < 4 over z < 5, t < 2: 8 of 10; height 0 <= 2p + r - 1 < 5
        # over p < 3, r < 3: 7 of 9; width 0 <= q + s - 1 < 5 over q < 5, s < 3: 13 of 15
        "conv3d": 1 * 3 * 2 * 8 * 7 * 13,  # 4,368 (dense 8,100)
        # scatter form, outputs inside Y (4 x 6 x 4): depth 0 <= 2d + t - 1 < 4 over d < 2,
        # t < 3: 5 of 6; height (< 6, h < 3): 8 of 9; width as depth: 5 of 6
        "conv_transpose3d": 1 * 3 * 2 * 5 * 8 * 5,  # 1,200 (dense 1,944)
    }
    for name, macs in cases.items():
        *_, lowered = lowered_case(name)
        graph = solar.trace(load_lowered(lowered))
        assert graph.total_macs == macs, (name, graph.total_macs)


KINDS = ("add", "mul", "div", "transcendental", "compare", "other")


def _counts(module, inputs, op):
    """(MACs, vector FLOPs by kind) summed over the nodes calling kernel `op`, and the graph."""
    lowered = lower(capture_module(copy.deepcopy(module).to("meta"), inputs))
    graph = solar.trace(load_lowered(lowered))
    nodes = [n for n in graph.nodes if n.op == op]
    assert nodes, (op, sorted({n.op for n in graph.nodes}))
    flops = {k: sum(n.flops[k] for n in nodes) for k in KINDS}
    return sum(n.macs for n in nodes), {k: v for k, v in flops.items() if v}, graph


# Minimum work per operator family (docs/pytorch-operators.md, "Counts"). Each number is
# derived from the kernel's nests: per element, per row / channel / group, per point.
MINIMUM_COUNTS = {
    # BatchNorm2d(3) training, x [2, 3, 4, 5]: N=2, C=3, S=20, 120 elements. Per element:
    # sum 1 add, sum of squares 1 mul + 1 add, y = x * scale + shift 1 mul + 1 add. Per
    # channel: mean 1 div; variance div, mul, sub, max; scale add, rsqrt, mul; shift mul, sub;
    # running mean mul, mul, add; running variance mul, mul, add (the unbiased factor
    # n / (n - 1) is the same at every point). add 3*120 + 5*3 = 375, mul 2*120 + 7*3 = 261.
    "batch_norm_train": (
        lambda: (nn.BatchNorm2d(3), [R(2, 3, 4, 5)]),
        "batch_norm_train_stats",
        0,
        {"add": 375, "mul": 261, "div": 6, "transcendental": 3, "compare": 3},
    ),
    # eval, x [4, 3]: 12 elements, 3 channels. Per element 1 mul + 1 add; per channel
    # scale = w * rsqrt(var + eps) (add, rsqrt, mul), shift = b - mean * scale (mul, sub).
    "batch_norm_eval": (
        lambda: (nn.BatchNorm1d(3).eval(), [R(4, 3)]),
        "batch_norm_eval",
        0,
        {"add": 12 + 6, "mul": 12 + 6, "transcendental": 3},
    ),
    # InstanceNorm2d(3), x [2, 3, 4, 4]: batch norm over a [1, 6, 16] view, 96 elements and 6
    # channels. Per element add 3, mul 2; per channel mean div; scale div, mul, sub, max,
    # add, rsqrt, mul; shift mul, sub: add 3, mul 3, div 2, compare 1, rsqrt 1.
    "instance_norm": (
        lambda: (nn.InstanceNorm2d(3), [R(2, 3, 4, 4)]),
        "batch_norm_train",
        0,
        {"add": 288 + 18, "mul": 192 + 18, "div": 12, "transcendental": 6, "compare": 6},
    ),
    # GroupNorm(2, 4), x [2, 4, 3, 3]: 72 elements, 4 (sample, group) pairs, 8 (sample,
    # channel) pairs. Per element add 3, mul 2; per group mean div, rstd div, mul, sub, max,
    # add, rsqrt; per channel scale = rstd * w (mul), shift = b - mean * scale (mul, sub).
    "group_norm": (
        lambda: (nn.GroupNorm(2, 4), [R(2, 4, 3, 3)]),
        "group_norm",
        0,
        {"add": 216 + 8 + 8, "mul": 144 + 4 + 16, "div": 8, "transcendental": 4, "compare": 4},
    ),
    # LayerNorm(5), x [2, 3, 5]: 6 rows of 5. Per element: sum add, squares mul + add,
    # y = (x - mean) * rstd * w + b: sub, mul, mul, add. Per row: mean div; rstd div, mul,
    # sub, max, add, rsqrt. add 4*30 + 2*6 = 132, mul 3*30 + 6 = 96.
    "layer_norm": (
        lambda: (nn.LayerNorm(5), [R(2, 3, 5)]),
        "layer_norm",
        0,
        {"add": 132, "mul": 96, "div": 12, "transcendental": 6, "compare": 6},
    ),
    # softmax over 5 of x [3, 5]: per element max (compare), exp(x - max) (sub, exp), sum
    # (add), times the row's reciprocal (mul); per row 1 div.
    "softmax": (
        lambda: (f(lambda x: F.softmax(x, 1)), [R(3, 5)]),
        "softmax_mid",
        0,
        {"add": 30, "mul": 15, "div": 3, "transcendental": 15, "compare": 15},
    ),
    # log_softmax: per element compare, sub + exp + add, x - (max + log sum) 1 sub; per row
    # max + log(sum): add, log.
    "log_softmax": (
        lambda: (f(lambda x: F.log_softmax(x, -1)), [R(3, 5)]),
        "log_softmax_mid",
        0,
        {"add": 45 + 3, "transcendental": 15 + 3, "compare": 15},
    ),
    # var over 5 of x [4, 5]: per element sum add, squares mul + add; per row
    # max(q - s * s / R, 0) / (R - correction): mul, div, sub, max, div.
    "var": (
        lambda: (f(lambda x: x.var(1)), [R(4, 5)]),
        "var_mid",
        0,
        {"add": 40 + 4, "mul": 20 + 4, "div": 8, "compare": 4},
    ),
    # 2-norm over 5 of x [4, 5]: per element mul + add (a square is no MAC), per row sqrt.
    "vector_norm": (
        lambda: (f(lambda x: torch.linalg.vector_norm(x, dim=1)), [R(4, 5)]),
        "norm2_mid",
        0,
        {"add": 20, "mul": 20, "transcendental": 4},
    ),
    # RMSNorm's x ** 2 is a square: one mul per element (x [3, 5]).
    "rms_norm_square": (lambda: (nn.RMSNorm(5), [R(3, 5)]), "square", 0, {"mul": 15}),
    # nn.ELU(): select(x > 0, x, expm1(x)): compare + expm1 per element (x [6]).
    "elu": (
        lambda: (f(lambda x: F.elu(x)), [R(6)]),
        "elu_unit",
        0,
        {"transcendental": 6, "compare": 6},
    ),
    # SELU: select(x > 0, x * scale, expm1(x) * (alpha * scale)): compare, 2 mul, expm1.
    "selu": (
        lambda: (f(lambda x: F.selu(x)), [R(6)]),
        "elu_scaled",
        0,
        {"mul": 12, "transcendental": 6, "compare": 6},
    ),
    # fmod(x, 1.5): q = x / s once; x - s * select(q < 0, ceil(q), floor(q)): compare, ceil,
    # floor, mul, sub.
    "fmod": (
        lambda: (f(lambda x: torch.fmod(x, 1.5)), [R(6)]),
        "fmod_scalar",
        0,
        {"add": 6, "mul": 6, "div": 6, "compare": 6, "other": 12},
    ),
    # tanh GELU: 0.5 * x * (1 + tanh(x * (c + c * 0.044715 * x * x))): 5 mul, 2 add, tanh.
    "gelu_tanh": (
        lambda: (f(lambda x: F.gelu(x, approximate="tanh")), [R(7)]),
        "gelu_tanh",
        0,
        {"add": 14, "mul": 35, "transcendental": 7},
    ),
    # bilinear 2 x 4 -> 2 x 7 (only W changes): 2 * 7 = 14 outputs, g0 + l * (g1 - g0): sub,
    # mul, add.
    "lerp": (
        lambda: (f(lambda x: F.interpolate(x, size=(2, 7), mode="bilinear")), [R(1, 1, 2, 4)]),
        "lerp_rows",
        0,
        {"add": 28, "mul": 14},
    ),
    # addmm(bias, a, b, beta=0.5, alpha=2), a [3, 4], b [4, 5]: 3*5*4 = 60 MACs; beta * bias
    # once per column (5 mul), alpha * c + beta * bias per element (15 mul + 15 add).
    "addmm_scaled": (
        lambda: (
            f(lambda bias, a, b: torch.addmm(bias, a, b, beta=0.5, alpha=2.0)),
            [R(5), R(3, 4), R(4, 5)],
        ),
        "addmm",
        60,
        {"add": 15, "mul": 20},
    ),
}


@pytest.mark.parametrize("name", list(MINIMUM_COUNTS))
def test_minimum_counts(name):
    """Per-row (per-channel, per-group) work is counted once per row, reductions are vector
    work, and no kernel computes a value twice or multiplies by a parameter equal to 1. The
    lowering still matches PyTorch (the same modules as CASES where they overlap)."""
    factory, op, macs, flops = MINIMUM_COUNTS[name]
    torch.manual_seed(0)
    module, inputs = factory()
    got_macs, got_flops, _ = _counts(module, inputs, op)
    assert (got_macs, got_flops) == (macs, flops)
    assert f"`{op}`" in counts_section(), f"docs/pytorch-operators.md has no row for {op}"


def test_minimum_counts_match_pytorch():
    """The kernels that MINIMUM_COUNTS counts, run on its inputs, reproduce PyTorch."""
    for name, (factory, *_) in MINIMUM_COUNTS.items():
        torch.manual_seed(0)
        module, inputs = factory()
        lowered = lower(capture_module(copy.deepcopy(module).to("meta"), inputs))
        got = run_lowered(module, inputs, lowered)
        with torch.no_grad():
            want = module(*inputs)
        np.testing.assert_allclose(
            got["out0"], want.numpy(), rtol=RTOL, atol=ATOL * 10, err_msg=name
        )


def test_batch_norm_running_statistics_are_read_and_written():
    """Training-mode batch norm updates running_mean, running_var and num_batches_tracked
    (torch.export's buffer mutations): model() returns the new values after the output, the
    buffers are read and written, and they match PyTorch's updated buffers."""
    torch.manual_seed(0)
    module, inputs = nn.BatchNorm2d(3), [R(2, 3, 4, 5)]
    lowered = lower(capture_module(copy.deepcopy(module).to("meta"), inputs))
    assert lowered.buffer_outputs == ["running_mean", "running_var", "num_batches_tracked"]
    _, _, graph = _counts(module, inputs, "batch_norm_train_stats")
    bn = next(n for n in graph.nodes if n.op == "batch_norm_train_stats")
    # reads x 4*120 = 480 and weight, bias, running mean, running var 4*3 = 12 each: 528;
    # writes y 480 and the two running statistics 12 each: 504.
    assert (bn.bytes_read, bn.bytes_written) == (528, 504)
    # fused: inputs 480 + 4*12 + num_batches_tracked 8 = 536, outputs 480 + 2*12 + 8 = 512
    # (before the buffers were lowered: 480 + 2*12 in, 480 out = 984).
    assert graph.fused_bytes == 1_048
    got = run_lowered(module, inputs, lowered)
    with torch.no_grad():
        want = module(*inputs)
    np.testing.assert_allclose(got["out0"], want.numpy(), rtol=RTOL, atol=ATOL * 10)
    np.testing.assert_allclose(got["out1"], module.running_mean.numpy(), rtol=RTOL, atol=1e-7)
    np.testing.assert_allclose(got["out2"], module.running_var.numpy(), rtol=RTOL, atol=1e-7)
    assert int(got["out3"]) == int(module.num_batches_tracked) == 1


def test_validation_compares_updated_buffers():
    """Whole-program validation runs PyTorch from the buffers' values before its forward pass,
    compares the IR's updated buffers with PyTorch's, and leaves the caller's module as it
    was."""
    torch.manual_seed(0)
    module = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU())
    before = {k: v.clone() for k, v in module.state_dict().items()}
    result = solar.analyze(module, [R(2, 3, 8, 8)], arch="H100_PCIe", cache_aware=False)
    assert result.validation.status == "full", result.validation.detail
    assert [o.name for o in result.validation.outputs] == [
        "out0",
        "out1 (updated buffer 1.running_mean)",
        "out2 (updated buffer 1.running_var)",
        "out3 (updated buffer 1.num_batches_tracked)",
    ]
    assert all(torch.equal(v, module.state_dict()[k]) for k, v in before.items())


def test_every_rule_is_exercised_and_documented():
    seen = set()
    for name in [*CASES, *ALIAS_CASES, *TRAINING_CASES]:
        seen |= set(lowered_case(name)[3].ops)
    missing = sorted(k for k in RULES if k not in seen and k not in UNSUPPORTED)
    assert not missing, f"rules no test case reaches: {missing}"
    doc = (ROOT / "docs" / "pytorch-operators.md").read_text()
    undocumented = sorted(k for k in RULES if f"`{k}`" not in doc)
    assert not undocumented, f"rules missing from docs/pytorch-operators.md: {undocumented}"


# ---------------------------------------------------------------------------- the operator doc
# docs/pytorch-operators.md is generated from RULES and the cases above:
#     .venv/bin/python tests/python/test_lowering_ops.py --write-doc
# Each operator's "lowering" column lists the stdlib kernels and builtins its rule emitted
# in the cases (recorded while lowering them); notes come from NOTES and rule docstrings.
NOTES = {
    "<built-in function getitem>": "an element of a multi-output operator's result (no node)",
    "aten.addmm.default": "bias of N elements with beta = alpha = 1: the bias-initialised "
    "contraction (paper's `linear`); a transposed weight is read in place (`_nt`)",
    "aten.mm.default": "a transposed operand feeding the product is folded (`mm_nt`, `mm_tn`, "
    "`mm_tt`)",
    "aten.bmm.default": "a transposed operand feeding the product is folded (`bmm_nt`, "
    "`bmm_tn`, `bmm_tt`); the two products of an attention with a causal or banded mask run "
    'only inside the band (`bmm_band`, `bmm_kband`: docs/pytorch.md, "Masked attention")',
    "aten.permute.default": "a swap of the last two dims read only by mm/bmm (either operand) or "
    "addmm (the weight) is folded into the product; a permutation returned as it is stays a "
    "view (`permute_view`)",
    "aten.convolution.default": "1-D as 2-D with H = 1; grouped and depthwise by group-split "
    "views; transposed in scatter form; taps in the padding are not counted (guarded)",
    "aten.max_pool2d_with_indices.default": "ceil_mode and dilation supported; the indices "
    "output is not produced (an error if it is used)",
    "aten.max_pool3d_with_indices.default": "as 2-D; indices not produced",
    "aten.avg_pool2d.default": "count_include_pad, ceil_mode (PyTorch's clipped divisor) and "
    "divisor_override supported",
    "aten.avg_pool3d.default": "count_include_pad and ceil_mode supported; divisor_override is not",
    "aten._adaptive_avg_pool2d.default": "divisible sizes: a regular pool; 1x1: a mean; "
    "otherwise per dim with gathered windows (`adaptive_index` + `gather`)",
    "aten.adaptive_max_pool2d.default": "as adaptive average pooling; indices not produced",
    "aten.unfold.default": "a view, as in PyTorch (the `unfold` builtin; no copy)",
    "aten.view.dtype": "a view, as in PyTorch (the `bitcast` builtin: the bytes read as "
    "another dtype; between sizes the last dim's size scales); not to or from nvfp4, int4 or "
    "tf32, nor to bool",
    "aten.constant_pad_nd.default": "a negative pad crops its side (a `slice`)",
    "aten.gather.default": "flat element numbers from an integer kernel, then the `gather` "
    "builtin on the flattened input",
    "aten.index.Tensor": "integer index tensors (negative indices wrap), adjacent or not, up "
    "to 3; boolean masks are not supported (data-dependent shape)",
    "aten.index_select.default": "the `gather` builtin along the dim; the gathered dim is "
    "moved back into place with a permute when dims precede it",
    "aten.embedding.default": "the `gather` builtin (rows of the table)",
    "aten.masked_scatter.default": "a running count numbers the masked positions "
    "(`masked_positions`), `gather` fetches those source elements, `where` merges",
    "aten.randn.default": "a model() input of role `generated` (0 bytes, made on chip); "
    "validation feeds the values PyTorch drew",
    "aten.topk.default": "the `topk` builtin: values and int64 indices, best first (also "
    "for sorted=False, whose order PyTorch leaves unspecified); 0 FLOPs",
    "aten.scatter.src": "the `scatter` builtin; index of the input's shape except along the "
    "dim; src cut to the index's shape",
    "aten.scatter.value": "the `scatter` builtin with a constant src of the index's shape",
    "aten.max.dim": "values only: the plain `amax` reduction; with indices: first extremum",
    "aten.min.dim": "values only: the plain `amin` reduction; with indices: first extremum",
    "aten.var.correction": "any correction (Bessel's by default)",
    "aten.linalg_vector_norm.default": "ord 2, 1, inf and any p > 0",
    "aten.native_dropout.default": "counted like the real operator; computes its expectation "
    "(the IR has no random numbers)",
    "aten.upsample_nearest2d.vec": "integer factors: affine scatter; other scales: gathered "
    "source rows per dim (fp32 index arithmetic, as PyTorch)",
    "aten.upsample_bilinear2d.vec": "separable: per dim, two gathered source rows blended "
    "(align_corners either way)",
    "aten.repeat.default": "a broadcast view (a reader fetches the source once)",
    "aten.slice_scatter.default": "in place (`update`) where eager PyTorch assigns in place "
    "(docs/pytorch.md, In-place updates); otherwise, step 1, the untouched slices and the "
    "source concatenated; another step, a `scatter` at start + step j (rules_index.py)",
    "aten.select_scatter.default": "as slice_scatter with one index",
    "aten.copy.default": "the source broadcast to the destination's shape and dtype",
    "aten.empty.memory_format": "zeros (the values are overwritten before use)",
    "aten.empty_permuted.default": "zeros (the values are overwritten before use)",
    "aten.full.default": "NaN fills come from a kernel (the IR has no NaN literal)",
    "aten.flip.default": "one reversing copy per run of adjacent flipped dims",
    "aten._native_batch_norm_legit_functional.default": "training mode: batch statistics; "
    "the running mean and variance are updated (read and written) when the program keeps "
    "them, as a whole module does (`batch_norm_train_stats`; num_batches_tracked is an "
    "`add_scalar`)",
    "aten.native_group_norm.default": "statistics per (sample, group); instance norm arrives "
    "as batch norm without running statistics over a [1, N*C, ...] view",
    "solar.fft_r2c.default": "torch.fft's `_fft_r2c`, `_fft_c2c` and `_fft_c2r` become these "
    "over pairs of reals, one per transformed dim (frontend/fft.py)",
}
BUILTINS = {b["name"] for b in solar._core.builtins()}  # the registry (graph/ops.def)
EXTRA_UNSUPPORTED = {
    "aten.nll_loss_forward.default": "not produced: PyTorch decomposes nll_loss / cross_entropy "
    "to `gather` + reductions in core ATen, which are supported",
    "aten.bitwise_and.Tensor (integers)": "bitwise arithmetic on integer tensors; on bool "
    "tensors it is a logical operator and supported",
    "aten._cdist_forward.default": "not implemented yet (write the distance explicitly: it "
    "decomposes to supported operators)",
    "aten.upsample_bicubic2d.vec": "not implemented yet (interpolate's 'area' mode is adaptive "
    "average pooling and is supported)",
    "aten.index_put.default (several index tensors)": "a write to data-chosen positions the "
    "`scatter` builtins cannot express where the index tensors index non-adjacent dims or "
    "more than three (x[bool_mask] = scalar, x[..., int_index] = v and x[..., i, j(, k)] = v, "
    "or += v, are supported)",
}


# docs/pytorch-operators.md ends with a hand-written section, "Counts per operator family"
# (MINIMUM_COUNTS tests its numbers): the generator keeps it as it is.
COUNTS_HEADING = "## Counts per operator family"


def counts_section() -> str:
    doc = (ROOT / "docs" / "pytorch-operators.md").read_text()
    return doc[doc.index(COUNTS_HEADING) :].rstrip("\n") if COUNTS_HEADING in doc else ""


def operator_table() -> str:
    import inspect
    import re

    from solar.frontend.builder import STDLIB
    from solar.frontend.lower import Lowerer

    files = {}
    for path in sorted(STDLIB.glob("*.py")):
        for name in re.findall(r"^def (\w+)\(", path.read_text(), re.M):
            files[name] = path.name
    used: dict = {}
    emit = Lowerer.emit

    def recording_emit(self, text):
        op = str(self.node.target) if self.node is not None else ""
        call = re.match(r"\s*[\w, \[\]]+ = (\w+)\(", text)
        if call:
            used.setdefault(op, set()).add(call.group(1))
        emit(self, text)

    Lowerer.emit = recording_emit
    try:
        for name in [*CASES, *ALIAS_CASES, *TRAINING_CASES]:
            lowered_case.__wrapped__(name)
    finally:
        Lowerer.emit = emit

    # Kernels the front end writes per call (named stem_<k>) and the module that writes them.
    generated = {
        "contract_": "frontend/contract.py",
        "sum_over_": "",
        "mm_block_scaled_": "frontend/narrow.py",
        "scaled_mm_fp8_": "frontend/narrow.py",
        "scaled_mm_nvfp4_": "frontend/narrow.py",
        "int_mm_": "frontend/narrow.py",
    }

    def describe(op):
        parts = []
        for n in sorted(used.get(op, ())):
            base = re.sub(r"_(bf16|fp16|fp64|int64|int32|bool|fp8_\w+)$", "", n)
            stem = next((g for g in generated if n.startswith(g)), None)
            if stem is not None:
                where = f": {generated[stem]}" if generated[stem] else ""
                parts.append(f"`{stem}*` (generated{where})")
            elif base in BUILTINS:
                parts.append(f"`{base}`")
            elif base in files:
                parts.append(f"`{base}` ({files[base]})")
        return ", ".join(dict.fromkeys(parts)) or "(passes its input through)"

    def note(op):
        if op in NOTES:
            return NOTES[op]
        doc = inspect.getdoc(RULES[op]) or ""
        return doc.split("\n\n")[0].replace("\n", " ") if doc else ""

    supported = sorted(k for k in RULES if k not in UNSUPPORTED)
    aliases = set()
    for name in ALIAS_CASES:
        aliases |= set(lowered_case(name)[3].ops)
    core = set()
    for name in CASES:
        core |= set(lowered_case(name)[3].ops)
    aliases -= core
    lines = [
        "# Supported PyTorch (ATen) operators",
        "",
        "Generated from `RULES` (`python/solar/frontend/rules.py`) by",
        "`.venv/bin/python tests/python/test_lowering_ops.py --write-doc`; "
        "`tests/python/test_lowering_ops.py`",
        "checks every rule numerically against PyTorch and that every rule is listed here.",
        "The capture (docs/pytorch.md) decomposes a program to core ATen, so composite",
        "operators (`silu`, `mish`, `hardswish`, `logsumexp`, `cross_entropy`, `lstm`, `einsum`,",
        "`pixel_shuffle`, `roll`, `F.unfold`, reflection/replication padding, `tril`, ...)",
        "arrive as the operators below. Complex tensors (`polar`, `view_as_complex`,",
        "`view_as_real`, their products, sums, quotients, magnitudes and views, and",
        "torch.fft's transforms) are rewritten over pairs of reals first (docs/pytorch.md,",
        "Complex tensors and Fourier transforms).",
        "",
        "Lowering conventions: elementwise operators run on flattened views (broadcasting is a",
        "`broadcast` view); reductions, scans and softmax view the tensor as `[A, R, B]` with R",
        "the reduced dims; kernels are instantiated per dtype. Data-dependent indexing (gather,",
        "advanced indexing, embeddings, non-integer resampling, uneven adaptive pooling) is an",
        "integer kernel computing row numbers plus the `gather` builtin: index arithmetic counts",
        "as vector FLOPs, never MACs. MACs come only from contractions (matrix products,",
        "convolutions: docs/ir.md §7.2); sums of squares in norms and variances are vector",
        "work. The work each operator is counted for is the least it needs: see",
        "[Counts](#counts-per-operator-family).",
        "",
        "## Operators of core ATen",
        "",
        "| operator | lowering (stdlib kernel / builtin) | notes |",
        "|---|---|---|",
    ]
    for op in supported:
        if op in aliases:
            continue
        lines.append(f"| `{op}` | {describe(op)} | {note(op)} |")
    lines += [
        "",
        "## Operators outside core ATen",
        "",
        "Reached only when a program is captured without the core decompositions; covered by",
        "the same tests (`ALIAS_CASES`).",
        "",
        "| operator | lowering (stdlib kernel / builtin) | notes |",
        "|---|---|---|",
    ]
    for op in supported:
        if op in aliases:
            lines.append(f"| `{op}` | {describe(op)} | {note(op)} |")
    lines += [
        "",
        "## Unsupported operators",
        "",
        "These are a clear `error[lower]` naming the operator and the source line.",
        "",
        "| operator | reason |",
        "|---|---|",
    ]
    for op in sorted(UNSUPPORTED):
        lines.append(f"| `{op}` | {UNSUPPORTED[op]} |")
    for op, why in EXTRA_UNSUPPORTED.items():
        lines.append(f"| `{op}` | {why} |")
    lines += [
        "",
        "Any other operator is reported as `operator aten.X has no lowering to the IR`.",
        "",
        *counts_section().splitlines(),
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    if "--write-doc" in sys.argv:
        (ROOT / "docs" / "pytorch-operators.md").write_text(operator_table())
