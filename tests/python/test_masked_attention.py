"""Attention with a causal or banded mask counts only the work the mask keeps
(python/solar/frontend/masks.py, docs/pytorch.md "Masked attention"), and the banded
products validate against PyTorch like any kernel."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

import solar  # noqa: E402
from solar.frontend.masks import _band  # noqa: E402

F = torch.nn.functional


def kept_pairs(rows: int, cols: int, lo: int, hi: int) -> int:
    """The (m, n) pairs with lo <= n - m <= hi, counted by brute force."""
    return sum(1 for m in range(rows) for n in range(cols) if lo <= n - m <= hi)


def analyze(module, *shapes):
    torch.manual_seed(0)
    return solar.analyze(module, [torch.randn(*s) for s in shapes], arch="H100_PCIe")


def bmm_ops(r) -> list[str]:
    return [n.op for n in r.graph.nodes if n.macs]


class SdpaCausal(torch.nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


class HandWritten(torch.nn.Module):
    """The SOL-ExecBench reference style: masked_fill of torch.triu(ones_like(scores))."""

    def __init__(self, diagonal: int = 1, window: int | None = None):
        super().__init__()
        self.diagonal, self.window = diagonal, window

    def forward(self, q, k, v):
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
        ones = torch.ones_like(scores, dtype=torch.bool)
        masked = torch.triu(ones, diagonal=self.diagonal)
        if self.window is not None:  # a sliding window: also the keys more than w behind
            masked = masked | torch.tril(ones, diagonal=-self.window)
        scores = scores.masked_fill(masked, float("-inf"))
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def test_a_causal_sdpa_counts_the_lower_triangle_and_validates():
    # B = 1, H = 2, S = 8, D = 4: each product multiplies the 8 x 9 / 2 = 36 kept pairs by
    # D = 4 per head: 2 x 36 x 4 = 288 MACs each, 576 in all (dense: 2 x 2 x 64 x 4 = 1,024).
    r = analyze(SdpaCausal(), (1, 2, 8, 4), (1, 2, 8, 4), (1, 2, 8, 4))
    assert kept_pairs(8, 8, -7, 0) == 36
    assert r.graph.total_macs == 576
    assert sorted(bmm_ops(r)) == ["bmm_band", "bmm_kband"]
    # Its softmax works on the kept scores only: per kept element 1 compare (max), 1 sub +
    # 1 exp, 1 add (sum), 1 mul (by the reciprocal), and 1 div per row: 5 x 2 x 36 + 2 x 8
    # = 376 (dense: 5 x 2 x 64 + 16 = 656).
    (softmax,) = [n for n in r.graph.nodes if n.op == "softmax_band"]
    assert softmax.vector_flops == 376
    assert r.validation.status == "full", r.validation.detail


def test_the_hand_written_mask_of_the_benchmark_references_is_found():
    # triu(diagonal=1) masks n > m: the band -15 <= n - m <= 0 over S = T = 16; H = 3,
    # D = 8: 2 products x 3 x 136 x 8 = 6,528 MACs.
    r = analyze(HandWritten(), (1, 3, 16, 8), (1, 3, 16, 8), (1, 3, 16, 8))
    assert r.graph.total_macs == 2 * 3 * kept_pairs(16, 16, -15, 0) * 8 == 6528
    assert r.validation.status == "full", r.validation.detail


def test_a_sliding_window_keeps_a_band():
    # triu(1) | tril(-4): keep 0 <= m - n <= 3, the band -3 <= n - m <= 0: over S = 16,
    # 1 + 2 + 3 + 4 x 13 = 58 pairs; H = 2, D = 8: 2 x 2 x 58 x 8 = 1,856 MACs.
    r = analyze(HandWritten(window=4), (1, 2, 16, 8), (1, 2, 16, 8), (1, 2, 16, 8))
    assert kept_pairs(16, 16, -3, 0) == 58
    assert r.graph.total_macs == 1856
    assert r.validation.status == "full", r.validation.detail


def test_a_row_masked_entirely_keeps_the_value_product_dense():
    # triu(diagonal=0) masks the diagonal too: row 0 keeps nothing (softmax gives NaN there,
    # so its zero probabilities cannot be skipped). The score product keeps -15 <= n - m <= -1
    # (120 pairs), the value product stays dense (256): 2 x (120 + 256) x 8 = 6,016 MACs.
    r = analyze(HandWritten(diagonal=0), (1, 2, 16, 8), (1, 2, 16, 8), (1, 2, 16, 8))
    assert kept_pairs(16, 16, -15, -1) == 120
    assert r.graph.total_macs == 6016
    ops = sorted(bmm_ops(r))
    assert ops[0] == "bmm" and ops[1].startswith("bmm_band"), ops
    assert r.validation.status == "full", r.validation.detail


class InputMask(torch.nn.Module):
    def forward(self, q, k, v, m):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m > 0)


class ScoresReturned(HandWritten):
    def forward(self, q, k, v):
        scores = torch.matmul(q, k.transpose(-1, -2))
        masked = torch.triu(torch.ones_like(scores, dtype=torch.bool), diagonal=1)
        probs = torch.softmax(scores.masked_fill(masked, float("-inf")), dim=-1)
        return torch.matmul(probs, v), scores


@pytest.mark.parametrize(
    "module, shapes",
    [
        # A mask that is an input: its values are unknown, nothing is skipped.
        (InputMask(), [(1, 2, 8, 4)] * 3 + [(8, 8)]),
        # Scores returned: every one of them is needed, and so is each probability.
        (ScoresReturned(), [(1, 2, 8, 4)] * 3),
    ],
    ids=["mask-is-an-input", "scores-returned"],
)
def test_masks_that_remove_no_work_count_dense(module, shapes):
    # Dense: 2 products x 2 heads x 64 pairs x 4 = 1,024 MACs.
    r = analyze(module, *shapes)
    assert r.graph.total_macs == 1024
    assert r.validation.status == "full", r.validation.detail


def test_band_recognition_is_exact():
    def mask(rows, cols, keep):
        return torch.tensor(
            [[not keep(m, n) for n in range(cols)] for m in range(rows)], dtype=torch.bool
        )

    # (lo, hi, c0, c1, every row keeps a key): lo <= n - m <= hi and c0 <= n <= c1; a side
    # no row reaches is the widest value (lo = c0 - (rows - 1), hi = c1).
    # Causal with more keys than queries, aligned bottom-right: keep n - m <= 2.
    assert _band(mask(3, 5, lambda m, n: n - m <= 2)) == (-2, 2, 0, 4, True)
    # A band clipped by the edges on both sides.
    assert _band(mask(6, 6, lambda m, n: -1 <= n - m <= 1)) == (-1, 1, 0, 5, True)
    # The last 2 keys for every query (the LLM_CORE "sliding window" reference), and a band
    # inside a key window.
    assert _band(mask(4, 6, lambda m, n: n >= 4)) == (1, 5, 4, 5, True)
    assert _band(mask(6, 8, lambda m, n: 2 <= n <= 6 and n - m <= 1)) == (-3, 1, 2, 6, False)
    # Not a band: one extra pair, a block-diagonal (document) mask, a strided mask.
    assert _band(mask(6, 6, lambda m, n: n <= m or (m, n) == (0, 5))) is None
    assert _band(mask(6, 6, lambda m, n: m // 3 == n // 3)) is None
    assert _band(mask(6, 6, lambda m, n: (n - m) % 2 == 0)) is None
    # A fully masked row is reported.
    assert _band(mask(4, 4, lambda m, n: n < m)) == (-3, -1, 0, 2, False)


BUFFER_MASK = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    """nanoGPT's mask: a buffer made by torch.tril in the constructor."""

    def __init__(self):
        super().__init__()
        self.register_buffer("bias", torch.tril(torch.ones(8, 8)).view(1, 1, 8, 8))
        self.drop = nn.Dropout(0.1)

    def forward(self, q, k, v):
        T = q.shape[2]
        att = (q @ k.transpose(-2, -1)) * 0.5
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        return self.drop(torch.softmax(att, dim=-1)) @ v


def get_inputs():
    return [torch.randn(1, 2, 8, 4) for _ in range(3)]


def get_init_inputs():
    return []
'''


@pytest.mark.parametrize("mode", ["eval", "train"])
def test_a_mask_the_model_registers_as_a_buffer_is_read_from_the_real_model(tmp_path, mode):
    # The buffer's values are not in the capture (fake tensors); the model is built for
    # real (it is small) to read them. Through dropout in training mode the probabilities'
    # zeros stay zeros. B = 1, H = 2, S = 8, D = 4: 2 products x 2 x 36 x 4 = 576 MACs.
    path = tmp_path / "gpt_mask.py"
    path.write_text(BUFFER_MASK)
    r = solar.analyze(str(path), mode=mode)
    assert r.graph.total_macs == 576
    assert r.validation.status == "full", r.validation.detail


class LastKeys(torch.nn.Module):
    """Each query sees only the last 4 keys (the LLM_CORE attention_sliding_window reference)."""

    def forward(self, q, k, v):
        scores = torch.matmul(q, k.transpose(-1, -2))
        cols = torch.arange(scores.shape[-1])[None, None, None, :]
        scores = scores.masked_fill(cols < max(0, scores.shape[-1] - 4), float("-inf"))
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def test_a_window_over_the_last_keys_counts_those_keys():
    # S = T = 32, H = 2, D = 8: every query keeps 4 keys: 2 products x 2 x 32 x 4 x 8 =
    # 4,096 MACs (dense 32,768).
    r = analyze(LastKeys(), (1, 2, 32, 8), (1, 2, 32, 8), (1, 2, 32, 8))
    assert r.graph.total_macs == 4096
    # Only those keys and values are read (through the keys' transpose too): fused bytes
    # q 2 x 32 x 8 x 4 B = 2,048, the output 2,048, k and v 2 x 4 x 8 x 4 B = 256 each: 4,608.
    assert r.analysis.fused.bytes == 4608
    assert r.validation.status == "full", r.validation.detail


class RaggedPrefill(torch.nn.Module):
    """FlashInfer-Trace's ragged prefill reference for one request: einsums in the
    [tokens, heads, ...] layout (an einsum's bmm is viewed and permuted back to it), a
    causal mask offset by the cached keys (delta = keys - queries) broadcast over the heads
    in the middle, and the masked scores also read by logsumexp."""

    def forward(self, q, k, v):
        logits = torch.einsum("qhd,khd->qhk", q, k) * 0.35
        delta = k.shape[0] - q.shape[0]
        rows, cols = torch.arange(q.shape[0]), torch.arange(k.shape[0])
        causal = cols[None, :] < (rows[:, None] + 1 + delta)
        logits = logits.masked_fill(~causal[:, None, :], float("-inf"))
        lse = torch.logsumexp(logits, dim=-1)
        out = torch.einsum("qhk,khd->qhd", torch.softmax(logits, dim=-1), v)
        return out, lse


def test_an_einsum_layout_with_the_heads_in_the_middle_is_banded():
    # 4 queries, 9 keys, delta 5: query m keeps the keys n <= m + 5, 6 + 7 + 8 + 9 = 30
    # pairs; 2 heads x 8 dims x 30 pairs in each of the two products = 960 MACs (dense:
    # 2 x 2 x 8 x 36 = 1,152). Validated against PyTorch.
    assert kept_pairs(4, 9, -3, 5) == 30
    r = analyze(RaggedPrefill(), (4, 2, 8), (9, 2, 8), (9, 2, 8))
    assert r.graph.total_macs == 960
    assert r.validation.status == "full"


class NegatedAfterTheMask(torch.nn.Module):
    """Scaled by -1 between the mask and the softmax: the masked -inf become +inf, so the
    softmax is not confined to the band (its products still are: the scores outside are
    overwritten whatever they hold, and no row keeps its zeros)."""

    def forward(self, q, k, v):
        scores = torch.matmul(q, k.transpose(-1, -2))
        masked = torch.triu(torch.ones_like(scores, dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(masked, float("-inf")) * -1.0
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def test_a_scaling_between_the_mask_and_the_softmax_keeps_the_softmax_dense():
    # B = 1, H = 1, S = 4, D = 2: the score product keeps 4 x 5 / 2 = 10 pairs x 2 = 20
    # MACs; the value product is dense, 16 pairs x 2 = 32: 52 MACs. Validated (the +inf
    # rows give NaN in both PyTorch and the IR).
    r = analyze(NegatedAfterTheMask(), (1, 1, 4, 2), (1, 1, 4, 2), (1, 1, 4, 2))
    assert r.graph.total_macs == 52
    assert r.validation.status == "full", r.validation.detail
