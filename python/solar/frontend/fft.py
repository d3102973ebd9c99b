"""Discrete Fourier transforms: torch.fft's core operators (`_fft_r2c`, `_fft_c2r`,
`_fft_c2c`, which rfft, irfft, fft, ifft, fftn, rfftn, irfftn, ... become) as the IR's `fft`
builtin (docs/ir.md, fft), one dim at a time.

The complex-pair pass (complex_pairs.py) rewrites each operator over the pair form of its
complex values into the custom operators below, one per transformed dim, in the order
PyTorch's own transforms run: an r2c transform of the last listed dim, then c2c transforms
of the others; a c2r transform inverts that order. The normalisation (`norm=`: none, 1/sqrt(n)
or 1/n of the whole transform) becomes each step's factor, the product of which is the
whole transform's. The lowering emits one `fft` call per custom operator.
"""

import functools
import math

from .builder import Value
from .values import tensor

# PyTorch's fft_norm_mode (aten/src/ATen/native/SpectralOpsUtils.h): none, by_root_n, by_n.
_NORMS = (lambda n: 1.0, lambda n: 1.0 / math.sqrt(n), lambda n: 1.0 / n)


@functools.cache
def register() -> None:
    """Defines solar::fft_r2c / fft_c2r / fft_c2c over pair forms (once per process: torch's
    operator library is the process's)."""
    import torch
    from torch import Tensor

    def as_complex(x):
        return torch.view_as_complex(x.contiguous())

    def as_pairs(z):
        return torch.view_as_real(z).clone()

    @torch.library.custom_op("solar::fft_r2c", mutates_args=())
    def fft_r2c(x: Tensor, dim: int, onesided: bool, scale: float) -> Tensor:
        spectrum = torch.fft.rfft(x, dim=dim) if onesided else torch.fft.fft(x, dim=dim)
        return as_pairs(spectrum * scale)

    @fft_r2c.register_fake
    def _(x, dim, onesided, scale):
        shape = list(x.shape)
        shape[dim] = shape[dim] // 2 + 1 if onesided else shape[dim]
        return x.new_empty([*shape, 2])

    @torch.library.custom_op("solar::fft_c2c", mutates_args=())
    def fft_c2c(x: Tensor, dim: int, inverse: bool, scale: float) -> Tensor:
        z = as_complex(x)  # unnormalised both ways: norm="forward" scales only the forward
        z = torch.fft.ifft(z, dim=dim, norm="forward") if inverse else torch.fft.fft(z, dim=dim)
        return as_pairs(z * scale)

    @fft_c2c.register_fake
    def _(x, dim, inverse, scale):
        return x.new_empty(x.shape)

    @torch.library.custom_op("solar::fft_c2r", mutates_args=())
    def fft_c2r(x: Tensor, dim: int, n: int, scale: float) -> Tensor:
        return torch.fft.irfft(as_complex(x), n=n, dim=dim, norm="forward") * scale

    @fft_c2r.register_fake
    def _(x, dim, n, scale):
        shape = list(x.shape[:-1])
        shape[dim] = n
        return x.new_empty(shape)


def fft_steps(target: str, args: tuple, shape_in, shape_out, real=False) -> list[tuple]:
    """The one-dim steps of a torch.fft core operator (`target` its name, `args` its
    arguments, the complex or real shapes of its input and output): [(custom operator,
    dim, its third argument, scale)], first to last. `real`: the input of a forward c2c
    transform is a real tensor made complex (torch.fft.fft of a real tensor), whose first
    step is a two-sided r2c transform of the real tensor."""
    dims, norm = [d % len(shape_in) for d in args[0]], _NORMS[args[1]]
    if target == "aten._fft_c2c.default" and real and args[2]:
        first = [("fft_r2c", dims[0], False, norm(shape_in[dims[0]]))]
        return first + [("fft_c2c", d, False, norm(shape_in[d])) for d in dims[1:]]
    if target == "aten._fft_r2c.default":
        last, rest = dims[-1], dims[:-1]
        steps = [("fft_r2c", last, bool(args[2]), norm(shape_in[last]))]
        return steps + [("fft_c2c", d, False, norm(shape_in[d])) for d in rest]
    if target == "aten._fft_c2c.default":
        return [("fft_c2c", d, not args[2], norm(shape_in[d])) for d in dims]
    last, rest = dims[-1], dims[:-1]  # aten._fft_c2r.default: the signal's sizes are shape_out
    steps = [("fft_c2c", d, True, norm(shape_out[d])) for d in rest]
    return steps + [("fft_c2r", last, int(args[2]), norm(shape_out[last]))]


FFT_OPS = ("aten._fft_r2c.default", "aten._fft_c2c.default", "aten._fft_c2r.default")


def _emit(lw, x, dim: int, kind: str, extra: str, scale: float) -> Value:
    x = tensor(lw, x)
    var = lw.fresh()
    lw.emit(f'{var} = fft({x.var}, dim={dim}, kind="{kind}"{extra}, scale={float(scale)!r})')
    return Value(var, tuple(lw.out_shape()), x.dtype)


def _r2c(lw, x, dim, onesided, scale):
    return _emit(lw, x, dim, "r2c", "" if onesided else ", onesided=0", scale)


def _c2c(lw, x, dim, inverse, scale):
    return _emit(lw, x, dim, "c2c", ", inverse=1" if inverse else "", scale)


def _c2r(lw, x, dim, n, scale):
    return _emit(lw, x, dim, "c2r", f", n={int(n)}", scale)


RULES = {
    "solar.fft_r2c.default": _r2c,
    "solar.fft_c2c.default": _c2c,
    "solar.fft_c2r.default": _c2r,
}
