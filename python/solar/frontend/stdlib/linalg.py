# Matrix products of the PyTorch front end. `_nt` variants read the second operand
# transposed (a folded permute: nn.Linear's weight is [N, K]), so no copy is counted.
from solar.ir import kernel, Tensor, Dim


@kernel
def mm(A: Tensor("M,K"), B: Tensor("K,N")) -> Tensor("M,N", dtype="fp32"):
    C = Tensor(M=A.shape[0], N=B.shape[1], dtype="fp32")
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            for k in Dim("K"):
                C[m, n] += A[m, k] * B[k, n]
    return C


@kernel
def mm_nt(A: Tensor("M,K"), B: Tensor("N,K")) -> Tensor("M,N", dtype="fp32"):
    C = Tensor(M=A.shape[0], N=B.shape[0], dtype="fp32")
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            for k in Dim("K"):
                C[m, n] += A[m, k] * B[n, k]
    return C


# beta * bias + alpha * (A @ B): beta * bias once per column, then one multiply-add per
# element.
@kernel
def addmm(Bias: Tensor("N"), A: Tensor("M,K"), B: Tensor("K,N"), beta: float, alpha: float) -> Tensor("M,N", dtype="fp32"):
    C = Tensor(M=A.shape[0], N=B.shape[1], dtype="fp32")
    Bb = Tensor(N=B.shape[1], dtype="fp32")
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            for k in Dim("K"):
                C[m, n] += A[m, k] * B[k, n]
    for n in Dim("N", parallel=True):
        Bb[n] = beta * Bias[n]
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            C[m, n] = alpha * C[m, n] + Bb[n]
    return C


@kernel
def addmm_nt(Bias: Tensor("N"), A: Tensor("M,K"), B: Tensor("N,K"), beta: float, alpha: float) -> Tensor("M,N", dtype="fp32"):
    C = Tensor(M=A.shape[0], N=B.shape[0], dtype="fp32")
    Bb = Tensor(N=B.shape[0], dtype="fp32")
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            for k in Dim("K"):
                C[m, n] += A[m, k] * B[n, k]
    for n in Dim("N", parallel=True):
        Bb[n] = beta * Bias[n]
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            C[m, n] = alpha * C[m, n] + Bb[n]
    return C


@kernel
def bmm(A: Tensor("B,M,K"), B: Tensor("B,K,N")) -> Tensor("B,M,N", dtype="fp32"):
    C = Tensor(B=A.shape[0], M=A.shape[1], N=B.shape[2], dtype="fp32")
    for b in Dim("B", parallel=True):
        for m in Dim("M", parallel=True):
            for n in Dim("N", parallel=True):
                for k in Dim("K"):
                    C[b, m, n] += A[b, m, k] * B[b, k, n]
    return C


@kernel
def bmm_nt(A: Tensor("B,M,K"), B: Tensor("B,N,K")) -> Tensor("B,M,N", dtype="fp32"):
    C = Tensor(B=A.shape[0], M=A.shape[1], N=B.shape[1], dtype="fp32")
    for b in Dim("B", parallel=True):
        for m in Dim("M", parallel=True):
            for n in Dim("N", parallel=True):
                for k in Dim("K"):
                    C[b, m, n] += A[b, m, k] * B[b, n, k]
    return C


# `_tn` / `_tt`: the first operand read transposed (`A.T @ B`: A stored [K, M]; cuBLAS and
# eager PyTorch read it in place), the second as stored or transposed too.
@kernel
def mm_tn(A: Tensor("K,M"), B: Tensor("K,N")) -> Tensor("M,N", dtype="fp32"):
    C = Tensor(M=A.shape[1], N=B.shape[1], dtype="fp32")
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            for k in Dim("K"):
                C[m, n] += A[k, m] * B[k, n]
    return C


@kernel
def mm_tt(A: Tensor("K,M"), B: Tensor("N,K")) -> Tensor("M,N", dtype="fp32"):
    C = Tensor(M=A.shape[1], N=B.shape[0], dtype="fp32")
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            for k in Dim("K"):
                C[m, n] += A[k, m] * B[n, k]
    return C


@kernel
def bmm_tn(A: Tensor("B,K,M"), B: Tensor("B,K,N")) -> Tensor("B,M,N", dtype="fp32"):
    C = Tensor(B=A.shape[0], M=A.shape[2], N=B.shape[2], dtype="fp32")
    for b in Dim("B", parallel=True):
        for m in Dim("M", parallel=True):
            for n in Dim("N", parallel=True):
                for k in Dim("K"):
                    C[b, m, n] += A[b, k, m] * B[b, k, n]
    return C


@kernel
def bmm_tt(A: Tensor("B,K,M"), B: Tensor("B,N,K")) -> Tensor("B,M,N", dtype="fp32"):
    C = Tensor(B=A.shape[0], M=A.shape[2], N=B.shape[1], dtype="fp32")
    for b in Dim("B", parallel=True):
        for m in Dim("M", parallel=True):
            for n in Dim("N", parallel=True):
                for k in Dim("K"):
                    C[b, m, n] += A[b, k, m] * B[b, n, k]
    return C


# The products of a masked attention (frontend/masks.py): the scores only inside the band
# lo <= n - m <= hi, c0 <= n <= c1 the mask keeps (the rest is overwritten with -inf), and
# the probabilities times the values only over the kept keys k (the rest are exact zeros).
@kernel
def bmm_band(A: Tensor("B,M,K"), B: Tensor("B,K,N"), lo: int, hi: int, c0: int, c1: int) -> Tensor("B,M,N", dtype="fp32"):
    C = Tensor(B=A.shape[0], M=A.shape[1], N=B.shape[2], dtype="fp32")
    for b in Dim("B", parallel=True):
        for m in Dim("M", parallel=True):
            for n in Dim("N", parallel=True):
                for k in Dim("K"):
                    if lo <= n - m and n - m <= hi and c0 <= n and n <= c1:
                        C[b, m, n] += A[b, m, k] * B[b, k, n]
    return C


@kernel
def bmm_band_nt(A: Tensor("B,M,K"), B: Tensor("B,N,K"), lo: int, hi: int, c0: int, c1: int) -> Tensor("B,M,N", dtype="fp32"):
    C = Tensor(B=A.shape[0], M=A.shape[1], N=B.shape[1], dtype="fp32")
    for b in Dim("B", parallel=True):
        for m in Dim("M", parallel=True):
            for n in Dim("N", parallel=True):
                for k in Dim("K"):
                    if lo <= n - m and n - m <= hi and c0 <= n and n <= c1:
                        C[b, m, n] += A[b, m, k] * B[b, n, k]
    return C


@kernel
def bmm_kband(A: Tensor("B,M,K"), B: Tensor("B,K,N"), lo: int, hi: int, c0: int, c1: int) -> Tensor("B,M,N", dtype="fp32"):
    C = Tensor(B=A.shape[0], M=A.shape[1], N=B.shape[2], dtype="fp32")
    for b in Dim("B", parallel=True):
        for m in Dim("M", parallel=True):
            for n in Dim("N", parallel=True):
                for k in Dim("K"):
                    if lo <= k - m and k - m <= hi and c0 <= k and k <= c1:
                        C[b, m, n] += A[b, m, k] * B[b, k, n]
    return C


@kernel
def bmm_kband_nt(A: Tensor("B,M,K"), B: Tensor("B,N,K"), lo: int, hi: int, c0: int, c1: int) -> Tensor("B,M,N", dtype="fp32"):
    C = Tensor(B=A.shape[0], M=A.shape[1], N=B.shape[1], dtype="fp32")
    for b in Dim("B", parallel=True):
        for m in Dim("M", parallel=True):
            for n in Dim("N", parallel=True):
                for k in Dim("K"):
                    if lo <= k - m and k - m <= hi and c0 <= k and k <= c1:
                        C[b, m, n] += A[b, m, k] * B[b, n, k]
    return C


# addmm with beta = alpha = 1, as nn.Linear produces it: the bias initialises the output
# (no FLOPs), then the contraction accumulates (the paper's Figure 2 `linear`).
@kernel
def linear(A: Tensor("M,K"), B: Tensor("K,N"), Bias: Tensor("N")) -> Tensor("M,N", dtype="fp32"):
    C = Tensor(M=A.shape[0], N=B.shape[1], dtype="fp32")
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            C[m, n] = Bias[n]
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            for k in Dim("K"):
                C[m, n] += A[m, k] * B[k, n]
    return C


@kernel
def linear_nt(A: Tensor("M,K"), W: Tensor("N,K"), Bias: Tensor("N")) -> Tensor("M,N", dtype="fp32"):
    C = Tensor(M=A.shape[0], N=W.shape[0], dtype="fp32")
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            C[m, n] = Bias[n]
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            for k in Dim("K"):
                C[m, n] += A[m, k] * W[n, k]
    return C
