"""In-place updates (docs/sol-modes.md, "In-place updates"; docs/ir.md, `update`).

Eager PyTorch runs `cache[:, p] = k` as one small copy into the cache's memory. torch.export
makes it functional (slice_scatter / select_scatter returning a whole new cache), and before
the `update` builtin the lowering copied the cache: on the KV-cache program below (cache
8 x 4096 x 128 fp32 = 16,777,216 B) the fused bound was 33.7 MB and the unfused 50.7 MB,
while eager moves about 16.8 MB: neither was a bound. Every number below is derived by hand.
"""

from __future__ import annotations

import solar
import torch
from torch import nn

CACHE = 8 * 4096 * 128 * 4  # 16,777,216 B
ROW = 8 * 128 * 4  # one position of every batch: 4,096 B


class SliceCache(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(8, 4096, 128))

    def forward(self, q, k):
        self.cache[:, 100:101] = k
        return torch.softmax(q @ self.cache.transpose(1, 2), dim=-1)


class SelectCache(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(8, 4096, 128))

    def forward(self, q, k):
        self.cache[:, 100] = k
        return torch.softmax(q @ self.cache.transpose(1, 2), dim=-1)


def test_a_kv_cache_assignment_writes_only_the_new_position():
    # q, k [8, 1, 128] (4,096 B each); scores and softmax [8, 1, 4096] (131,072 B).
    # Fused: the cache's old elements the matmul reads, less the row written in place (on
    # chip): 16,777,216 - 4,096; k 4,096; q 4,096; the in-place row 4,096; the softmax
    # 131,072; the updated buffer is the cache's own memory: 0. Total 16,912,384 B.
    # Unfused: the update (k read, row written: 8,192), the matmul (q 4,096 + the cache
    # 16,777,216 + scores 131,072), the softmax (131,072 + 131,072): 17,186,816 B.
    for model, k in ((SliceCache(), torch.randn(8, 1, 128)), (SelectCache(), torch.randn(8, 128))):
        r = solar.analyze(model, [torch.randn(8, 1, 128), k], arch="H100_PCIe")
        assert r.validation.status == "full", r.validation.detail
        assert r.fused.bytes == CACHE - ROW + 3 * ROW + 131_072
        assert r.unfused.bytes == 2 * ROW + ROW + CACHE + 131_072 + 2 * 131_072
        assert "update(b_cache" in r.ir_text


class IndexCopyCache(nn.Module):
    """transformers' StaticCache writes new keys with index_copy_."""

    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(8, 4096, 128))

    def forward(self, q, k, pos):
        self.cache.index_copy_(1, pos, k)
        return torch.softmax(q @ self.cache.transpose(1, 2), dim=-1)


class IndexPutCache(SliceCache):
    def forward(self, q, k, pos):
        self.cache[:, pos] = k
        return torch.softmax(q @ self.cache.transpose(1, 2), dim=-1)


def test_a_kv_cache_written_at_a_tensor_position_writes_only_that_position():
    # As above, with the position a tensor (int64 [1]: 8 B, read once through the broadcast
    # index): an in-place scatter. Fused and unfused 8 B more than the slice assignment.
    for model in (IndexCopyCache(), IndexPutCache()):
        r = solar.analyze(
            model,
            [torch.randn(8, 1, 128), torch.randn(8, 1, 128), torch.tensor([100])],
            arch="H100_PCIe",
        )
        assert r.validation.status == "full", r.validation.detail
        assert r.fused.bytes == CACHE - ROW + 3 * ROW + 131_072 + 8
        assert r.unfused.bytes == 2 * ROW + ROW + CACHE + 131_072 + 2 * 131_072 + 8
        assert "inplace=1" in r.ir_text


class ZeroColumns(nn.Module):
    def forward(self, x):
        x[:, :10] = 0
        return x


def test_an_input_assigned_in_place_is_written_only_where_assigned():
    # x [4096, 4096] fp32; eager writes 4096 x 10 zeros (163,840 B) and reads nothing of x.
    # The zero is a lifted constant (4 B read). Before `update`: x read and written whole.
    r = solar.analyze(ZeroColumns(), [torch.randn(4096, 4096)], arch="H100_PCIe", validate=False)
    assert r.fused.bytes == 163_840 + 4
    assert r.unfused.bytes == 163_840 + 4


class ReadAfter(nn.Module):
    def forward(self, x):
        y = x * 2
        z = torch.slice_scatter(y, torch.zeros(64, 2), dim=1, start=0, end=2)
        return z + y  # y's old value is read after the scatter: no in-place update


class ScatterIntoInput(nn.Module):
    def forward(self, x):
        return torch.slice_scatter(x, torch.zeros(64, 2), dim=1, start=0, end=2)


def test_a_scatter_whose_base_lives_on_or_is_an_input_copies():
    # ReadAfter: y is read after the scatter, so it is copied (concat). ScatterIntoInput: x is
    # the caller's and not mutated, so the result is a new tensor. Fused for the latter: x's
    # columns 2.. read (64 x 62 x 4 = 15,872 B; the zeros are made on chip) + the output
    # 16,384 B = 32,256 B.
    x = torch.randn(64, 64)
    r = solar.analyze(ReadAfter(), [x], arch="H100_PCIe")
    assert r.validation.status == "full", r.validation.detail
    assert "update(" not in r.ir_text and "concat(" in r.ir_text
    r = solar.analyze(ScatterIntoInput(), [x], arch="H100_PCIe")
    assert r.validation.status == "full", r.validation.detail
    assert "update(" not in r.ir_text
    assert r.fused.bytes == 32_256
