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


# Average pooling. The sum runs over the taps inside the input; the divisor of output (p, q)
# counts the taps whose position lies in [lo, hi) per dim: [0, H) for count_include_pad=False,
# [-pad, H + pad) for count_include_pad=True (PyTorch clips a ceil_mode window that overhangs
# the padded input). The divisor does not depend on N: it is counted once per window.
@kernel
def avg_pool2d(X: Tensor("N,H,W"), kh: int, kw: int, sh: int, sw: int, ph: int, pw: int, oh: int, ow: int, lo_h: int, hi_h: int, lo_w: int, hi_w: int) -> Tensor("N,P,Q", dtype="fp32"):
    Win = Tensor(R=kh, S=kw)
    T = Tensor(N=X.shape[0], P=oh, Q=ow, dtype="fp32")
    C = Tensor(P=oh, Q=ow, dtype="fp32")
    Y = Tensor(N=X.shape[0], P=oh, Q=ow, dtype="fp32")
    for n in Dim("N", parallel=True):
        for p in Dim("P", parallel=True):
            for q in Dim("Q", parallel=True):
                for r in Dim("R"):
                    for s in Dim("S"):
                        if 0 <= p * sh + r - ph and p * sh + r - ph < size("H") and 0 <= q * sw + s - pw and q * sw + s - pw < size("W"):
                            T[n, p, q] += X[n, p * sh + r - ph, q * sw + s - pw]
    for p in Dim("P", parallel=True):
        for q in Dim("Q", parallel=True):
            for r in Dim("R"):
                for s in Dim("S"):
                    if lo_h <= p * sh + r - ph and p * sh + r - ph < hi_h and lo_w <= q * sw + s - pw and q * sw + s - pw < hi_w:
                        C[p, q] += 1.0
    for n in Dim("N", parallel=True):
        for p in Dim("P", parallel=True):
            for q in Dim("Q", parallel=True):
                Y[n, p, q] = T[n, p, q] / C[p, q]
    return Y


# avg_pool2d with divisor_override: every window divides by `divisor`.
@kernel
def avg_pool2d_div(X: Tensor("N,H,W"), kh: int, kw: int, sh: int, sw: int, ph: int, pw: int, oh: int, ow: int, divisor: float) -> Tensor("N,P,Q", dtype="fp32"):
    Win = Tensor(R=kh, S=kw)
    T = Tensor(N=X.shape[0], P=oh, Q=ow, dtype="fp32")
    Y = Tensor(N=X.shape[0], P=oh, Q=ow, dtype="fp32")
    for n in Dim("N", parallel=True):
        for p in Dim("P", parallel=True):
            for q in Dim("Q", parallel=True):
                for r in Dim("R"):
                    for s in Dim("S"):
                        if 0 <= p * sh + r - ph and p * sh + r - ph < size("H") and 0 <= q * sw + s - pw and q * sw + s - pw < size("W"):
                            T[n, p, q] += X[n, p * sh + r - ph, q * sw + s - pw]
    for n in Dim("N", parallel=True):
        for p in Dim("P", parallel=True):
            for q in Dim("Q", parallel=True):
                Y[n, p, q] = T[n, p, q] / divisor
    return Y


@kernel
def max_pool3d(X: Tensor("N,D,H,W"), kd: int, kh: int, kw: int, sd: int, sh: int, sw: int, pd: int, ph: int, pw: int, dd: int, dh: int, dw: int, od: int, oh: int, ow: int) -> Tensor("N,Z,P,Q", dtype="fp32"):
    Win = Tensor(T=kd, R=kh, S=kw)
    Y = Tensor(N=X.shape[0], Z=od, P=oh, Q=ow, fill=-inf, dtype="fp32")
    for n in Dim("N", parallel=True):
        for z in Dim("Z", parallel=True):
            for p in Dim("P", parallel=True):
                for q in Dim("Q", parallel=True):
                    for t in Dim("T"):
                        for r in Dim("R"):
                            for s in Dim("S"):
                                if 0 <= z * sd + t * dd - pd and z * sd + t * dd - pd < size("D") and 0 <= p * sh + r * dh - ph and p * sh + r * dh - ph < size("H") and 0 <= q * sw + s * dw - pw and q * sw + s * dw - pw < size("W"):
                                    Y[n, z, p, q] = max(Y[n, z, p, q], X[n, z * sd + t * dd - pd, p * sh + r * dh - ph, q * sw + s * dw - pw])
    return Y


@kernel
def avg_pool3d(X: Tensor("N,D,H,W"), kd: int, kh: int, kw: int, sd: int, sh: int, sw: int, pd: int, ph: int, pw: int, od: int, oh: int, ow: int, lo_d: int, hi_d: int, lo_h: int, hi_h: int, lo_w: int, hi_w: int) -> Tensor("N,Z,P,Q", dtype="fp32"):
    Win = Tensor(T=kd, R=kh, S=kw)
    A = Tensor(N=X.shape[0], Z=od, P=oh, Q=ow, dtype="fp32")
    C = Tensor(Z=od, P=oh, Q=ow, dtype="fp32")
    Y = Tensor(N=X.shape[0], Z=od, P=oh, Q=ow, dtype="fp32")
    for n in Dim("N", parallel=True):
        for z in Dim("Z", parallel=True):
            for p in Dim("P", parallel=True):
                for q in Dim("Q", parallel=True):
                    for t in Dim("T"):
                        for r in Dim("R"):
                            for s in Dim("S"):
                                if 0 <= z * sd + t - pd and z * sd + t - pd < size("D") and 0 <= p * sh + r - ph and p * sh + r - ph < size("H") and 0 <= q * sw + s - pw and q * sw + s - pw < size("W"):
                                    A[n, z, p, q] += X[n, z * sd + t - pd, p * sh + r - ph, q * sw + s - pw]
    for z in Dim("Z", parallel=True):
        for p in Dim("P", parallel=True):
            for q in Dim("Q", parallel=True):
                for t in Dim("T"):
                    for r in Dim("R"):
                        for s in Dim("S"):
                            if lo_d <= z * sd + t - pd and z * sd + t - pd < hi_d and lo_h <= p * sh + r - ph and p * sh + r - ph < hi_h and lo_w <= q * sw + s - pw and q * sw + s - pw < hi_w:
                                C[z, p, q] += 1.0
    for n in Dim("N", parallel=True):
        for z in Dim("Z", parallel=True):
            for p in Dim("P", parallel=True):
                for q in Dim("Q", parallel=True):
                    Y[n, z, p, q] = A[n, z, p, q] / C[z, p, q]
    return Y


# Adaptive pooling along one dim (separable: 2-D and 3-D pool one dim after another). Window p
# of n_in -> n_out covers [floor(p*n_in/n_out), ceil((p+1)*n_in/n_out)): windows differ in
# start and length, so their rows are fetched with `gather`: I[p, k] is the k-th row of window
# p (repeating its last row past the end; M[p, k] = 0 there) and C[p] its length.
@kernel
def adaptive_index(n_in: int, n_out: int, kmax: int) -> (Tensor("P,K", dtype="int64"), Tensor("P,K", dtype="fp32"), Tensor("P", dtype="fp32")):
    I = Tensor(P=n_out, K=kmax, dtype="int64")
    M = Tensor(P=n_out, K=kmax, dtype="fp32")
    C = Tensor(P=n_out, dtype="fp32")
    for p in Dim("P", parallel=True):
        for k in Dim("K", parallel=True):
            I[p, k] = min(floor(p * n_in / n_out) + k, ceil((p + 1) * n_in / n_out) - 1)
            M[p, k] = select(floor(p * n_in / n_out) + k < ceil((p + 1) * n_in / n_out), 1.0, 0.0)
    for p in Dim("P", parallel=True):
        C[p] = ceil((p + 1) * n_in / n_out) - floor(p * n_in / n_out)
    return I, M, C


# G = gather(X[A, R, B], I, dim=1): [P, K, A, B] -> [A, P, B]
@kernel
def adaptive_max_rows(G: Tensor("P,K,A,B")) -> Tensor("A,P,B", dtype="fp32"):
    Y = Tensor(A=G.shape[2], P=G.shape[0], B=G.shape[3], fill=-inf, dtype="fp32")
    for a in Dim("A", parallel=True):
        for p in Dim("P", parallel=True):
            for k in Dim("K"):
                for b in Dim("B", parallel=True):
                    Y[a, p, b] = max(Y[a, p, b], G[p, k, a, b])
    return Y


@kernel
def adaptive_avg_rows(G: Tensor("P,K,A,B"), M: Tensor("P,K"), C: Tensor("P")) -> Tensor("A,P,B", dtype="fp32"):
    S = Tensor(A=G.shape[2], P=G.shape[0], B=G.shape[3], dtype="fp32")
    Y = Tensor(A=G.shape[2], P=G.shape[0], B=G.shape[3], dtype="fp32")
    for a in Dim("A", parallel=True):
        for p in Dim("P", parallel=True):
            for k in Dim("K"):
                for b in Dim("B", parallel=True):
                    S[a, p, b] += select(M[p, k] != 0.0, G[p, k, a, b], 0.0)
    for a in Dim("A", parallel=True):
        for p in Dim("P", parallel=True):
            for b in Dim("B", parallel=True):
                Y[a, p, b] = S[a, p, b] / C[p]
    return Y


# The gradient of a max pool whose windows do not overlap (XLA's select_and_scatter_add):
# row a of G goes to position I[a, b] of its window of n positions, zeros elsewhere: one
# select (and its compare) per input element.
@kernel
def scatter_to_index_mid(G: Tensor("A,B"), I: Tensor("A,B"), n: int) -> Tensor("A,R,B", dtype="fp32"):
    Y = Tensor(A=G.shape[0], R=n, B=G.shape[1], dtype="fp32")
    for a in Dim("A", parallel=True):
        for r in Dim("R", parallel=True):
            for b in Dim("B", parallel=True):
                Y[a, r, b] = select(I[a, b] == r, G[a, b], 0.0)
    return Y


# Max pooling that also gives, per output, the flat position (h * W + w) in its input plane
# of the first maximum of its window (torch.max_pool2d_with_indices: strict > keeps the
# first): for a training step, whose backward scatters the gradient to those positions.
# Per tap, the max's compare and the select's.
@kernel
def max_pool2d_idx(X: Tensor("N,H,W"), kh: int, kw: int, sh: int, sw: int, ph: int, pw: int, dh: int, dw: int, oh: int, ow: int) -> (Tensor("N,P,Q", dtype="fp32"), Tensor("N,P,Q", dtype="int64")):
    Win = Tensor(R=kh, S=kw)
    Y = Tensor(N=X.shape[0], P=oh, Q=ow, fill=-inf, dtype="fp32")
    I = Tensor(N=X.shape[0], P=oh, Q=ow, dtype="int64")
    for n in Dim("N", parallel=True):
        for p in Dim("P", parallel=True):
            for q in Dim("Q", parallel=True):
                for r in Dim("R"):
                    for s in Dim("S"):
                        if 0 <= p * sh + r * dh - ph and p * sh + r * dh - ph < size("H") and 0 <= q * sw + s * dw - pw and q * sw + s * dw - pw < size("W"):
                            I[n, p, q] = select(X[n, p * sh + r * dh - ph, q * sw + s * dw - pw] > Y[n, p, q], (p * sh + r * dh - ph) * size("W") + q * sw + s * dw - pw, I[n, p, q])
                            Y[n, p, q] = max(Y[n, p, q], X[n, p * sh + r * dh - ph, q * sw + s * dw - pw])
    return Y, I
