# Pooling of the PyTorch front end, over [N, H, W] (channels folded into N by a view).
# Window dims R, S are named by a local allocation (docs/ir.md, window dims).
from solar.ir import kernel, Tensor, Dim


@kernel
def max_pool2d(X: Tensor("N,H,W"), kh: int, kw: int, sh: int, sw: int, ph: int, pw: int, dh: int, dw: int, oh: int, ow: int) -> Tensor("N,P,Q", dtype="fp32"):
    Win = Tensor(R=kh, S=kw)
    Y = Tensor(N=X.shape[0], P=oh, Q=ow, fill=-inf, dtype="fp32")
    for n in Dim("N", parallel=True):
        for p in Dim("P", parallel=True):
            for q in Dim("Q", parallel=True):
                for r in Dim("R"):
                    for s in Dim("S"):
                        if 0 <= p * sh + r * dh - ph and p * sh + r * dh - ph < size("H") and 0 <= q * sw + s * dw - pw and q * sw + s * dw - pw < size("W"):
                            Y[n, p, q] = max(Y[n, p, q], X[n, p * sh + r * dh - ph, q * sw + s * dw - pw])
    return Y


# Average pooling; `count_pad` = 1 divides by kh*kw (count_include_pad=True), 0 by the
# number of taps inside the input.
@kernel
def avg_pool2d(X: Tensor("N,H,W"), kh: int, kw: int, sh: int, sw: int, ph: int, pw: int, oh: int, ow: int, count_pad: int) -> Tensor("N,P,Q", dtype="fp32"):
    Win = Tensor(R=kh, S=kw)
    T = Tensor(N=X.shape[0], P=oh, Q=ow, dtype="fp32")
    C = Tensor(N=X.shape[0], P=oh, Q=ow, dtype="fp32")
    Y = Tensor(N=X.shape[0], P=oh, Q=ow, dtype="fp32")
    for n in Dim("N", parallel=True):
        for p in Dim("P", parallel=True):
            for q in Dim("Q", parallel=True):
                for r in Dim("R"):
                    for s in Dim("S"):
                        if 0 <= p * sh + r - ph and p * sh + r - ph < size("H") and 0 <= q * sw + s - pw and q * sw + s - pw < size("W"):
                            T[n, p, q] += X[n, p * sh + r - ph, q * sw + s - pw]
                            C[n, p, q] += 1.0
    for n in Dim("N", parallel=True):
        for p in Dim("P", parallel=True):
            for q in Dim("Q", parallel=True):
                Y[n, p, q] = T[n, p, q] / select(count_pad == 1, kh * kw, C[n, p, q])
    return Y
