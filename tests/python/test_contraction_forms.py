"""Contractions in any form (docs/sol-modes.md, "Contraction forms"): a product summed over a
dim both factors span, torch.einsum with two, three or more operands, a diagonal einsum and
DeepSeek MLA's chain written with torch.einsum. Each is counted as MACs of one generated
contraction kernel (frontend/contract.py), validated against PyTorch by execution (the
default of solar.analyze), and every number is derived by hand beside it."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import solar  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MLA_EINSUM = ROOT / "examples" / "pytorch" / "mla_einsum.py"
MLA_IR = ROOT / "examples" / "ir" / "mla_absorbed_attention.py"

# What torch.einsum's own decomposition puts around its bmm, and what eager writes for a
# broadcast product before summing it.
COPIES = {"permute", "copy", "transpose", "mul", "sum_mid", "mean_mid"}


def analyze(module, *shapes, **kwargs):
    torch.manual_seed(0)
    return solar.analyze(
        module, [torch.randn(*s) for s in shapes], arch="H100_PCIe", cache_aware=False, **kwargs
    )


def ops(r) -> list[str]:
    return [n.op for n in r.graph.nodes if n.op not in ("reshape", "broadcast")]


class ProductSum(torch.nn.Module):
    """G = (C[:, :, None] * B[:, None]).sum(-1): the Mamba-2 reference's form."""

    def forward(self, c, b):
        return (c[:, :, None] * b[:, None]).sum(-1)


def test_a_product_summed_over_a_shared_dim_is_one_contraction():
    # c [2, 5, 8], b [2, 6, 8], summed over the last dim (8, both factors span it): batch 2,
    # M 5, N 6, K 8: MACs = 2·5·6·8 = 480, matrix FLOPs 960, no vector FLOPs (the product
    # [2, 5, 6, 8] is never formed).
    r = analyze(ProductSum(), (2, 5, 8), (2, 6, 8))
    assert ops(r) == ["contract_0"]
    assert r.graph.total_macs == 480
    node = next(n for n in r.graph.nodes if n.op == "contract_0")
    assert node.vector_flops == 0
    # Unfused: one unit reading c (2·5·8·4 = 320 B) and b (2·6·8·4 = 384 B) and writing G
    # (2·5·6·4 = 240 B): 944 B. Eager also writes and reads the product (2·5·6·8·4 =
    # 1,920 B each way), which the unit does not charge.
    assert r.analysis.unfused.bytes == 944
    assert r.validation.status == "full", r.validation.detail


class ProductMean(torch.nn.Module):
    """An explicit expand, and a mean: the contraction, then one scale per output."""

    def forward(self, c, b):
        return (c.unsqueeze(2).expand(2, 5, 6, 8) * b[:, None]).mean(dim=-1)


def test_a_product_averaged_is_a_contraction_and_a_scale():
    # As above 480 MACs; the mean's 1/8 is one multiply per output: 2·5·6 = 60 vector FLOPs.
    r = analyze(ProductMean(), (2, 5, 8), (2, 6, 8))
    assert ops(r) == ["contract_0", "mul_scalar"]
    assert r.graph.total_macs == 480
    assert sum(n.vector_flops for n in r.graph.nodes) == 60
    assert r.validation.status == "full", r.validation.detail


class IntraChunk(torch.nn.Module):
    """Mamba-2's intra-chunk scan as SOL-ExecBench's reference writes it: G over the state
    dim, then Y over the source positions (dim 3) of a masked G times the inputs."""

    def forward(self, x, c, b, decay):
        g = (c[:, :, :, None, :, :] * b[:, :, None, :, :, :]).sum(dim=-1)
        m = g * decay
        return (m[..., None] * x[:, :, None, :, :, :]).sum(dim=3)


def test_the_mamba2_intra_chunk_products_are_contractions():
    # batch 1, chunks 2, chunk length l = 4, heads h = 2, state n = 3, head dim p = 5.
    # G[b,c,i,j,h] = sum_n C[b,c,i,h,n] B[b,c,j,h,n]: 1·2·4·4·2·3 = 192 MACs;
    # Y[b,c,i,h,p] = sum_j M[b,c,i,j,h] X[b,c,j,h,p]: 1·2·4·4·2·5 = 320 MACs; 512 in all.
    # The decay product stays elementwise: 1·2·4·4·2 = 64 vector FLOPs.
    r = analyze(IntraChunk(), (1, 2, 4, 2, 5), (1, 2, 4, 2, 3), (1, 2, 4, 2, 3), (1, 2, 4, 4, 2))
    assert r.graph.total_macs == 192 + 320
    assert sum(n.vector_flops for n in r.graph.nodes) == 64
    assert ops(r) == ["contract_0", "mul", "contract_1"]
    assert r.validation.status == "full", r.validation.detail


class OneSidedSum(torch.nn.Module):
    def forward(self, x, y):
        return (x * y).sum(-1)


def test_a_sum_over_a_dim_one_factor_spans_is_left_as_a_product_and_a_sum():
    # x [4, 8], y [4, 1]: the summed dim (8) is x's alone, so there is no contraction: the
    # product (32 multiplies) and the sum (32 adds) stay vector work, 0 MACs.
    r = analyze(OneSidedSum(), (4, 8), (4, 1))
    assert r.graph.total_macs == 0
    assert "mul" in ops(r) and "sum_mid" in ops(r)
    assert r.validation.status == "full", r.validation.detail


class BatchedDot(torch.nn.Module):
    def forward(self, x, y):
        return (x * torch.sigmoid(y)).sum(-1)


def test_a_batched_dot_stays_vector_work():
    # x, y [4, 8]: no dim one factor alone spans (no M or N), so no matrix product: 32
    # multiplies and 32 adds stay vector work, 0 MACs (as JAX's twin counts
    # jnp.sum(x * y, -1)).
    r = analyze(BatchedDot(), (4, 8), (4, 8))
    assert r.graph.total_macs == 0
    assert "mul" in ops(r) and "sum_mid" in ops(r)


class SumOfSquares(torch.nn.Module):
    def forward(self, x):
        return (x * x).sum(-1)


def test_a_sum_of_squares_stays_vector_work():
    # x [4, 8]: (x * x).sum(-1) squares 32 elements and adds them: 0 MACs, as x.pow(2).sum(-1)
    # (docs/pytorch-operators.md: sums of squares are vector work).
    r = analyze(SumOfSquares(), (4, 8))
    assert r.graph.total_macs == 0
    assert r.validation.status == "full", r.validation.detail


class Transposed(torch.nn.Module):
    def forward(self, a, b):
        return torch.einsum("bkm,bnk->bmn", a, b)


def test_an_einsum_reads_transposed_operands_in_place():
    # a [2, 8, 5] holds K before M, b [2, 6, 8] N before K: B·M·N·K = 2·5·6·8 = 480 MACs in
    # one kernel reading both as they are: no permute or copy (torch's decomposition copied
    # both into bmm's layout).
    r = analyze(Transposed(), (2, 8, 5), (2, 6, 8))
    assert ops(r) == ["contract_0"]
    assert r.graph.total_macs == 480
    assert r.validation.status == "full", r.validation.detail


class Ellipsis(torch.nn.Module):
    def forward(self, a, b):
        return torch.einsum("...ij,...jk->...ik", a, b)


def test_an_einsum_with_an_ellipsis():
    # [2, 3, 4, 5] x [2, 3, 5, 6]: 2·3 batch, M 4, K 5, N 6: 2·3·4·5·6 = 720 MACs.
    r = analyze(Ellipsis(), (2, 3, 4, 5), (2, 3, 5, 6))
    assert ops(r) == ["contract_0"]
    assert r.graph.total_macs == 720
    assert r.validation.status == "full", r.validation.detail


class Outer(torch.nn.Module):
    """Mamba's discretisation, `einsum("bld,dn->bldn", delta, A)`, and an elementwise
    product written as an einsum: products without a sum."""

    def forward(self, delta, a, u):
        return torch.einsum("bld,dn->bldn", delta, a), torch.einsum("bld,bld->bld", delta, u)


def test_an_einsum_without_a_sum_counts_one_product_an_element():
    # delta [2, 3, 4], A [4, 5]: 2·3·4·5 = 120 outputs, one multiply each; the elementwise
    # einsum 2·3·4 = 24 more: 144 FLOPs, one an element, no MAC (nothing is summed). The
    # kernel once wrote `C += A * B`, counting an add per element too (288 FLOPs).
    r = analyze(Outer(), (2, 3, 4), (4, 5), (2, 3, 4))
    assert r.graph.total_macs == 0
    assert r.graph.total_flops == 144
    contracts = [n for n in r.graph.nodes if n.op.startswith("contract_")]
    assert [n.vector_flops for n in contracts] == [120, 24]
    assert r.validation.status == "full", r.validation.detail


class Three(torch.nn.Module):
    def forward(self, a, b, c):
        return torch.einsum("ij,jk,kl->il", a, b, c)


def test_a_three_operand_einsum_is_two_contractions_with_nothing_between():
    # A 4x6, B 6x3, C 3x5 left to right: (AB) 4·6·3 = 72, (AB)C 4·3·5 = 60: 132 MACs (the
    # other order, A(BC), 6·3·5 + 4·6·5 = 210, so opt_einsum picks the same one).
    with torch.backends.opt_einsum.flags(enabled=False):
        r = analyze(Three(), (4, 6), (6, 3), (3, 5))
    # Both steps are [M, K] x [K, N]: one generated kernel, called twice.
    assert ops(r) == ["contract_0", "contract_0"]
    assert [n.macs for n in r.graph.nodes if n.macs] == [72, 60]
    assert r.validation.status == "full", r.validation.detail


class Diagonal(torch.nn.Module):
    def forward(self, a, b):
        return torch.einsum("ii,ij->j", a, b)


def test_a_diagonal_einsum_keeps_torchs_decomposition():
    # A label twice in one operand: torch's decomposition (a diagonal, then bmm) as before:
    # diag(a) [4] times b [4, 7] summed over i: 4·7 = 28 MACs.
    r = analyze(Diagonal(), (4, 4), (4, 7))
    assert r.graph.total_macs == 28
    assert "bmm" in ops(r)
    assert r.validation.status == "full", r.validation.detail


class SmallMla(torch.nn.Module):
    """examples/pytorch/mla_einsum.py's forward at small sizes: B 1, S = T 8, H 2, N 4,
    C 6, V 4, D 5."""

    def __init__(self):
        super().__init__()
        self.w_uk = torch.nn.Parameter(torch.randn(2, 4, 6))
        self.w_uv = torch.nn.Parameter(torch.randn(2, 6, 4))
        self.w_o = torch.nn.Parameter(torch.randn(2, 4, 5))

    def forward(self, q_nope, c_kv):
        q = torch.einsum("bshn,hnc->bshc", q_nope, self.w_uk)
        scores = torch.einsum("bshc,btc->bhst", q, c_kv)
        p = torch.softmax(scores * 0.5, dim=-1)
        o = torch.einsum("bhst,btc->bhsc", p, c_kv)
        y = torch.einsum("bhsc,hcv->bhsv", o, self.w_uv)
        return torch.einsum("bhsv,hvd->bsd", y, self.w_o)


def test_the_mla_einsums_have_no_copies_between_them():
    # q: B·S·H·N·C = 8·2·4·6 = 384; scores: B·H·S·T·C = 2·8·8·6 = 768; o: B·H·S·T·C = 768;
    # y: B·H·S·C·V = 2·8·6·4 = 384; out: B·S·H·V·D = 8·2·4·5 = 320: 2,624 MACs.
    r = analyze(SmallMla(), (1, 8, 2, 4), (1, 8, 6))
    assert r.graph.total_macs == 384 + 768 + 768 + 384 + 320
    assert not COPIES & set(ops(r)), ops(r)
    assert [op for op in ops(r) if op.startswith("contract")] == [f"contract_{i}" for i in range(5)]
    assert r.validation.status == "full", r.validation.detail


def test_the_mla_einsum_chain_matches_the_ir_example():
    # The value chain P · c_KV · W_UV · W_O (the paper's Figure 4b), in 2^30 MACs: left to
    # right 1024 + 32 + 448 = 1504, best (P (c_KV W_UV)) W_O 32 + 256 + 448 = 736 (2.04x),
    # worst 16184 (range 22x), over Catalan(3) = 5 orders; the score chain 1056 against 288.
    # Derived in examples/ir/mla_absorbed_attention.py; the same as its IR twin.
    g30 = 2**30
    score, value = solar.chains(str(MLA_EINSUM))
    ir_score, ir_value = solar.chains(str(MLA_IR))
    assert len(value.orders) == 5
    assert [o.macs for o in value.orders] == [o.macs for o in ir_value.orders]
    assert [o.macs for o in score.orders] == [o.macs for o in ir_score.orders]
    assert value.orders[value.left_to_right].macs == 1504 * g30
    assert value.orders[value.best].macs == 736 * g30
    assert value.orders[value.worst].macs == 16184 * g30
    assert value.as_written == value.left_to_right
    assert value.orders[value.worst].flops / value.orders[value.best].flops == pytest.approx(
        16184 / 736
    )
    assert score.orders[score.left_to_right].macs == 1056 * g30
    assert score.orders[score.best].macs == 288 * g30


def test_fp32_product_sums_are_priced_as_matmuls():
    # Under PyTorch's settings (accuracy="framework") a fp32 matmul-like operator follows
    # torch.get_float32_matmul_precision() ("highest": fp32); the einsum and the product sum
    # get the same mode, and under the default contract (KernelBench's 1e-2) the same format.
    framework = [
        analyze(m, (2, 8, 5), (2, 6, 8), accuracy="framework").analysis.math_modes
        for m in (Transposed(), TransposedProductSum())
    ]
    assert [[g.mode for g in modes] for modes in framework] == [["fp32"], ["fp32"]]
    contract = [
        analyze(m, (2, 8, 5), (2, 6, 8)).analysis.math_modes
        for m in (Transposed(), TransposedProductSum())
    ]
    assert [[g.mode for g in modes] for modes in contract] == [["bf16"], ["bf16"]]


class TransposedProductSum(torch.nn.Module):
    """Transposed's contraction written as a product and a sum."""

    def forward(self, a, b):
        return (a.transpose(1, 2)[:, :, None, :] * b[:, None, :, :]).sum(-1)
