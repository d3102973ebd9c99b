# Reductions, scans and softmax of the PyTorch front end over a middle dim: the lowering
# reshapes a tensor to [A, R, B] (views) where R is the (contiguous block of) reduced dims.
# Sums accumulate in fp64 locals (on chip: no traffic), as PyTorch's pairwise and
# double-accumulated sums are far more accurate than one fp32 running sum over millions of
# terms; the result is stored in the output's dtype.
from solar.ir import kernel, Tensor, Dim


@kernel
def sum_mid(X: Tensor("A,R,B")) -> Tensor("A,B", dtype="fp32"):
    S = Tensor(A=X.shape[0], B=X.shape[2], dtype="fp64")
    Y = Tensor(A=X.shape[0], B=X.shape[2], dtype="fp32")
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                S[a, b] += X[a, r, b]
    for a in Dim("A", parallel=True):
        for b in Dim("B", parallel=True):
            Y[a, b] = S[a, b]
    return Y


@kernel
def mean_mid(X: Tensor("A,R,B")) -> Tensor("A,B", dtype="fp32"):
    S = Tensor(A=X.shape[0], B=X.shape[2], dtype="fp64")
    Y = Tensor(A=X.shape[0], B=X.shape[2], dtype="fp32")
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                S[a, b] += X[a, r, b]
    for a in Dim("A", parallel=True):
        for b in Dim("B", parallel=True):
            Y[a, b] = S[a, b] / size("R")
    return Y


@kernel
def amax_mid(X: Tensor("A,R,B")) -> Tensor("A,B", dtype="fp32"):
    Y = Tensor(A=X.shape[0], B=X.shape[2], fill=-inf, dtype="fp32")
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                Y[a, b] = max(Y[a, b], X[a, r, b])
    return Y


@kernel
def amin_mid(X: Tensor("A,R,B")) -> Tensor("A,B", dtype="fp32"):
    Y = Tensor(A=X.shape[0], B=X.shape[2], fill=inf, dtype="fp32")
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                Y[a, b] = min(Y[a, b], X[a, r, b])
    return Y


@kernel
def prod_mid(X: Tensor("A,R,B")) -> Tensor("A,B", dtype="fp32"):
    Y = Tensor(A=X.shape[0], B=X.shape[2], fill=1, dtype="fp32")
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                Y[a, b] *= X[a, r, b]
    return Y


@kernel
def argmax_mid(X: Tensor("A,R,B")) -> Tensor("A,B", dtype="int64"):
    M = Tensor(A=X.shape[0], B=X.shape[2], fill=-inf, dtype="fp32")
    I = Tensor(A=X.shape[0], B=X.shape[2], dtype="int64")
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                I[a, b] = select(X[a, r, b] > M[a, b], r, I[a, b])
                M[a, b] = max(M[a, b], X[a, r, b])
    return I


@kernel
def argmin_mid(X: Tensor("A,R,B")) -> Tensor("A,B", dtype="int64"):
    M = Tensor(A=X.shape[0], B=X.shape[2], fill=inf, dtype="fp32")
    I = Tensor(A=X.shape[0], B=X.shape[2], dtype="int64")
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                I[a, b] = select(X[a, r, b] < M[a, b], r, I[a, b])
                M[a, b] = min(M[a, b], X[a, r, b])
    return I


# Softmax: per element 1 compare (max), 1 sub + 1 exp (stored in Y), 1 add (sum), 1 mul (by
# the row's reciprocal); per row 1 div. The exponentials are computed once.
@kernel
def softmax_mid(X: Tensor("A,R,B")) -> Tensor("A,R,B", dtype="fp32"):
    M = Tensor(A=X.shape[0], B=X.shape[2], fill=-inf, dtype="fp32")
    S = Tensor(A=X.shape[0], B=X.shape[2], dtype="fp64")
    Rc = Tensor(A=X.shape[0], B=X.shape[2], dtype="fp64")
    Y = Tensor(A=X.shape[0], R=X.shape[1], B=X.shape[2], dtype="fp32")
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                M[a, b] = max(M[a, b], X[a, r, b])
    for a in Dim("A", parallel=True):
        for r in Dim("R", parallel=True):
            for b in Dim("B", parallel=True):
                Y[a, r, b] = exp(X[a, r, b] - M[a, b])
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                S[a, b] += Y[a, r, b]
    for a in Dim("A", parallel=True):
        for b in Dim("B", parallel=True):
            Rc[a, b] = 1.0 / S[a, b]
    for a in Dim("A", parallel=True):
        for r in Dim("R", parallel=True):
            for b in Dim("B", parallel=True):
                Y[a, r, b] = Y[a, r, b] * Rc[a, b]
    return Y


# The softmax of a masked attention (frontend/masks.py) over the keys n of each query row m
# that the band lo <= n - m <= hi, c0 <= n <= c1 keeps, as softmax_mid per kept element; the masked
# probabilities are exact zeros (Y's fill: every row keeps a key, so exp(-inf - max) = 0).
@kernel
def softmax_band(X: Tensor("A,M,N"), lo: int, hi: int, c0: int, c1: int) -> Tensor("A,M,N", dtype="fp32"):
    Mx = Tensor(A=X.shape[0], M=X.shape[1], fill=-inf, dtype="fp32")
    S = Tensor(A=X.shape[0], M=X.shape[1], dtype="fp64")
    Rc = Tensor(A=X.shape[0], M=X.shape[1], dtype="fp64")
    Y = Tensor(A=X.shape[0], M=X.shape[1], N=X.shape[2], dtype="fp32")
    for a in Dim("A", parallel=True):
        for m in Dim("M", parallel=True):
            for n in Dim("N"):
                if lo <= n - m and n - m <= hi and c0 <= n and n <= c1:
                    Mx[a, m] = max(Mx[a, m], X[a, m, n])
    for a in Dim("A", parallel=True):
        for m in Dim("M", parallel=True):
            for n in Dim("N", parallel=True):
                if lo <= n - m and n - m <= hi and c0 <= n and n <= c1:
                    Y[a, m, n] = exp(X[a, m, n] - Mx[a, m])
    for a in Dim("A", parallel=True):
        for m in Dim("M", parallel=True):
            for n in Dim("N"):
                if lo <= n - m and n - m <= hi and c0 <= n and n <= c1:
                    S[a, m] += Y[a, m, n]
    for a in Dim("A", parallel=True):
        for m in Dim("M", parallel=True):
            Rc[a, m] = 1.0 / S[a, m]
    for a in Dim("A", parallel=True):
        for m in Dim("M", parallel=True):
            for n in Dim("N", parallel=True):
                if lo <= n - m and n - m <= hi and c0 <= n and n <= c1:
                    Y[a, m, n] = Y[a, m, n] * Rc[a, m]
    return Y


# Log-softmax: per element 1 compare, 3 (sub, exp, add: the sum) and 1 sub (x - the row's
# max + log-sum); per row 1 log + 1 add.
@kernel
def log_softmax_mid(X: Tensor("A,R,B")) -> Tensor("A,R,B", dtype="fp32"):
    M = Tensor(A=X.shape[0], B=X.shape[2], fill=-inf, dtype="fp32")
    S = Tensor(A=X.shape[0], B=X.shape[2], dtype="fp64")
    L = Tensor(A=X.shape[0], B=X.shape[2], dtype="fp64")
    Y = Tensor(A=X.shape[0], R=X.shape[1], B=X.shape[2], dtype="fp32")
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                M[a, b] = max(M[a, b], X[a, r, b])
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                S[a, b] += exp(X[a, r, b] - M[a, b])
    for a in Dim("A", parallel=True):
        for b in Dim("B", parallel=True):
            L[a, b] = M[a, b] + log(S[a, b])
    for a in Dim("A", parallel=True):
        for r in Dim("R", parallel=True):
            for b in Dim("B", parallel=True):
                Y[a, r, b] = X[a, r, b] - L[a, b]
    return Y


@kernel
def cumsum_mid(X: Tensor("A,R,B")) -> Tensor("A,R,B", dtype="fp32"):
    S = Tensor(A=X.shape[0], R=X.shape[1], B=X.shape[2], dtype="fp64")
    Y = Tensor(A=X.shape[0], R=X.shape[1], B=X.shape[2], dtype="fp32")
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                if r == 0:
                    S[a, r, b] = X[a, r, b]
                else:
                    S[a, r, b] = S[a, r - 1, b] + X[a, r, b]
    for a in Dim("A", parallel=True):
        for r in Dim("R", parallel=True):
            for b in Dim("B", parallel=True):
                Y[a, r, b] = S[a, r, b]
    return Y


@kernel
def cumprod_mid(X: Tensor("A,R,B")) -> Tensor("A,R,B", dtype="fp32"):
    Y = Tensor(A=X.shape[0], R=X.shape[1], B=X.shape[2], dtype="fp32")
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                if r == 0:
                    Y[a, r, b] = X[a, r, b]
                else:
                    Y[a, r, b] = Y[a, r - 1, b] * X[a, r, b]
    return Y


# Running maximum / minimum along R (lax.cummax / cummin; PyTorch's also give indices, below):
# one compare per element; NaN propagates, as the IR's max and min do.
@kernel
def cummax_mid(X: Tensor("A,R,B")) -> Tensor("A,R,B", dtype="fp32"):
    Y = Tensor(A=X.shape[0], R=X.shape[1], B=X.shape[2], dtype="fp32")
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                if r == 0:
                    Y[a, r, b] = X[a, r, b]
                else:
                    Y[a, r, b] = max(Y[a, r - 1, b], X[a, r, b])
    return Y


@kernel
def cummin_mid(X: Tensor("A,R,B")) -> Tensor("A,R,B", dtype="fp32"):
    Y = Tensor(A=X.shape[0], R=X.shape[1], B=X.shape[2], dtype="fp32")
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                if r == 0:
                    Y[a, r, b] = X[a, r, b]
                else:
                    Y[a, r, b] = min(Y[a, r - 1, b], X[a, r, b])
    return Y


# torch.cummax / cummin with indices: the running extreme and the position it was last taken
# from (a tie takes the later position, a NaN is taken and then kept, as PyTorch does): the
# position by compare, NaN test and select, the value from it (whether it moved, and select).
@kernel
def cummax_idx_mid(X: Tensor("A,R,B")) -> (Tensor("A,R,B", dtype="fp32"), Tensor("A,R,B", dtype="int64")):
    Y = Tensor(A=X.shape[0], R=X.shape[1], B=X.shape[2], dtype="fp32")
    I = Tensor(A=X.shape[0], R=X.shape[1], B=X.shape[2], dtype="int64")
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                if r == 0:
                    Y[a, r, b] = X[a, r, b]
                    I[a, r, b] = 0
                else:
                    I[a, r, b] = select((X[a, r, b] >= Y[a, r - 1, b]) + (X[a, r, b] != X[a, r, b]), r, I[a, r - 1, b])
                    Y[a, r, b] = select(I[a, r, b] == r, X[a, r, b], Y[a, r - 1, b])
    return Y, I


@kernel
def cummin_idx_mid(X: Tensor("A,R,B")) -> (Tensor("A,R,B", dtype="fp32"), Tensor("A,R,B", dtype="int64")):
    Y = Tensor(A=X.shape[0], R=X.shape[1], B=X.shape[2], dtype="fp32")
    I = Tensor(A=X.shape[0], R=X.shape[1], B=X.shape[2], dtype="int64")
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                if r == 0:
                    Y[a, r, b] = X[a, r, b]
                    I[a, r, b] = 0
                else:
                    I[a, r, b] = select((X[a, r, b] <= Y[a, r - 1, b]) + (X[a, r, b] != X[a, r, b]), r, I[a, r - 1, b])
                    Y[a, r, b] = select(I[a, r, b] == r, X[a, r, b], Y[a, r - 1, b])
    return Y, I


# Variance with Bessel-style correction, in one pass: a sum and a sum of squares (3 per
# element), then (sum(x^2) - sum(x)^2 / R) / (R - correction) per output (exact enough in fp64).
@kernel
def var_mid(X: Tensor("A,R,B"), correction: float) -> Tensor("A,B", dtype="fp32"):
    S = Tensor(A=X.shape[0], B=X.shape[2], dtype="fp64")
    Q = Tensor(A=X.shape[0], B=X.shape[2], dtype="fp64")
    Y = Tensor(A=X.shape[0], B=X.shape[2], dtype="fp32")
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                S[a, b] += X[a, r, b]
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                Q[a, b] += X[a, r, b] * X[a, r, b]
    for a in Dim("A", parallel=True):
        for b in Dim("B", parallel=True):
            Y[a, b] = max(Q[a, b] - S[a, b] * S[a, b] / size("R"), 0.0) / (size("R") - correction)
    return Y


@kernel
def var_mean_mid(X: Tensor("A,R,B"), correction: float) -> (Tensor("A,B", dtype="fp32"), Tensor("A,B", dtype="fp32")):
    S = Tensor(A=X.shape[0], B=X.shape[2], dtype="fp64")
    Q = Tensor(A=X.shape[0], B=X.shape[2], dtype="fp64")
    Y = Tensor(A=X.shape[0], B=X.shape[2], dtype="fp32")
    Z = Tensor(A=X.shape[0], B=X.shape[2], dtype="fp32")
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                S[a, b] += X[a, r, b]
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                Q[a, b] += X[a, r, b] * X[a, r, b]
    for a in Dim("A", parallel=True):
        for b in Dim("B", parallel=True):
            Y[a, b] = max(Q[a, b] - S[a, b] * S[a, b] / size("R"), 0.0) / (size("R") - correction)
    for a in Dim("A", parallel=True):
        for b in Dim("B", parallel=True):
            Z[a, b] = S[a, b] / size("R")
    return Y, Z


@kernel
def any_mid(X: Tensor("A,R,B")) -> Tensor("A,B", dtype="bool"):
    Y = Tensor(A=X.shape[0], B=X.shape[2], fill=0, dtype="bool")
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                Y[a, b] = max(Y[a, b], select(X[a, r, b] != 0, 1, 0))
    return Y


@kernel
def all_mid(X: Tensor("A,R,B")) -> Tensor("A,B", dtype="bool"):
    Y = Tensor(A=X.shape[0], B=X.shape[2], fill=1, dtype="bool")
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                Y[a, b] = min(Y[a, b], select(X[a, r, b] != 0, 1, 0))
    return Y


# torch.max(x, dim) / torch.min(x, dim): values and the index of the first extremum.
@kernel
def max_dim_mid(X: Tensor("A,R,B")) -> (Tensor("A,B", dtype="fp32"), Tensor("A,B", dtype="int64")):
    M = Tensor(A=X.shape[0], B=X.shape[2], fill=-inf, dtype="fp32")
    I = Tensor(A=X.shape[0], B=X.shape[2], dtype="int64")
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                I[a, b] = select(X[a, r, b] > M[a, b], r, I[a, b])
                M[a, b] = max(M[a, b], X[a, r, b])
    return M, I


@kernel
def min_dim_mid(X: Tensor("A,R,B")) -> (Tensor("A,B", dtype="fp32"), Tensor("A,B", dtype="int64")):
    M = Tensor(A=X.shape[0], B=X.shape[2], fill=inf, dtype="fp32")
    I = Tensor(A=X.shape[0], B=X.shape[2], dtype="int64")
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                I[a, b] = select(X[a, r, b] < M[a, b], r, I[a, b])
                M[a, b] = min(M[a, b], X[a, r, b])
    return M, I


# Vector norms (torch.linalg.vector_norm) over the middle dim.
@kernel
def norm2_mid(X: Tensor("A,R,B")) -> Tensor("A,B", dtype="fp32"):
    S = Tensor(A=X.shape[0], B=X.shape[2], dtype="fp64")
    Y = Tensor(A=X.shape[0], B=X.shape[2], dtype="fp32")
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                S[a, b] += X[a, r, b] * X[a, r, b]
    for a in Dim("A", parallel=True):
        for b in Dim("B", parallel=True):
            Y[a, b] = sqrt(S[a, b])
    return Y


@kernel
def norm1_mid(X: Tensor("A,R,B")) -> Tensor("A,B", dtype="fp32"):
    S = Tensor(A=X.shape[0], B=X.shape[2], dtype="fp64")
    Y = Tensor(A=X.shape[0], B=X.shape[2], dtype="fp32")
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                S[a, b] += abs(X[a, r, b])
    for a in Dim("A", parallel=True):
        for b in Dim("B", parallel=True):
            Y[a, b] = S[a, b]
    return Y


@kernel
def norminf_mid(X: Tensor("A,R,B")) -> Tensor("A,B", dtype="fp32"):
    Y = Tensor(A=X.shape[0], B=X.shape[2], fill=0, dtype="fp32")
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                Y[a, b] = max(Y[a, b], abs(X[a, r, b]))
    return Y


@kernel
def normp_mid(X: Tensor("A,R,B"), p: float) -> Tensor("A,B", dtype="fp32"):
    S = Tensor(A=X.shape[0], B=X.shape[2], dtype="fp64")
    Y = Tensor(A=X.shape[0], B=X.shape[2], dtype="fp32")
    for a in Dim("A", parallel=True):
        for r in Dim("R"):
            for b in Dim("B", parallel=True):
                S[a, b] += abs(X[a, r, b]) ** p
    for a in Dim("A", parallel=True):
        for b in Dim("B", parallel=True):
            Y[a, b] = S[a, b] ** (1.0 / p)
    return Y
