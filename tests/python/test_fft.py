"""torch.fft programs: lowered to the `fft` builtin over pairs of reals (frontend/fft.py),
validated against PyTorch, counted with the fewest known operations (docs/ir.md, fft)."""

import pytest

torch = pytest.importorskip("torch")

import solar  # noqa: E402


class FftConv(torch.nn.Module):
    """Hyena's long convolution (SOL-ExecBench's fftconv): u and the filter k zero-padded to
    2L, multiplied in the frequency domain, transformed back, the first L kept."""

    def forward(self, u, k):
        n = 2 * u.shape[-1]
        k_f = torch.fft.rfft(k, n=n) / n
        u_f = torch.fft.rfft(u, n=n)
        y = torch.fft.irfft(u_f * k_f, n=n, norm="forward")[..., : u.shape[-1]]
        return y + u


def test_fft_convolution_validates_and_counts_the_transforms():
    # u [B=2, C=4, L=8], k [C=4, L=8], n = 16. Real transforms of 16 points take
    # 17/9·16·4 - 89/27·16 - 10/9·4 + 8/27 + 2 = 66 operations (Johnson and Frigo's count):
    # rfft(k) 4 · 66 = 264, rfft(u) 8 · 66 = 528, irfft 8 · 66 = 528: 1,320 in all.
    r = solar.analyze(FftConv(), [torch.randn(2, 4, 8), torch.randn(4, 8)], arch="B200")
    assert r.validation.status == "full"
    ffts = [n for n in r.graph.nodes if n.op == "fft"]
    # The per-node table names what they do: the one builtin that computes.
    from solar.report import einsum_text

    assert [einsum_text(n) for n in ffts] == ["(fft)"] * 3
    assert [n.attributes["kind"] for n in ffts] == ["r2c", "r2c", "c2r"]
    assert sum(n.vector_flops for n in ffts) == 1320
    # The fused bound reads u (256 B) and k (128 B) and writes y (256 B): 640 B; the spectra
    # stay on chip.
    assert r.fused.bytes == 640


def test_fft_of_a_real_tensor_is_a_two_sided_r2c_transform():
    # torch.fft.fft(x) of a real x casts it to complex first; the lowering transforms the
    # real values (no zero imaginary parts are made): one r2c of all 8 bins per row.
    r = solar.analyze(
        torch.nn.Sequential(_Lambda(lambda x: torch.view_as_real(torch.fft.fft(x)))),
        [torch.randn(3, 8)],
    )
    assert r.validation.status == "full"
    (node,) = [n for n in r.graph.nodes if n.op == "fft"]
    assert node.attributes["kind"] == "r2c" and not node.attributes["onesided"]
    assert [n.op for n in r.graph.nodes if n.op in ("concat", "constant")] == []


class _Lambda(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)
