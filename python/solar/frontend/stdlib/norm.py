# Normalisations of the PyTorch front end. The lowering reshapes to the layouts below.
# Statistics accumulate in fp64 locals (on chip: no traffic; see reduce.py).
#
# Each kernel does the least work its operator needs (docs/pytorch-operators.md, "Counts"):
# the statistics in one pass (a sum and a sum of squares: 1 add + 1 mul + 1 add per element;
# the variance is E[x^2] - mean^2, accurate in fp64), every per-row (per-channel, per-group)
# value once per row, and the output as one multiply-add per element with the row's scale
# and shift (plus one more for an affine weight that varies along the row, as layer norm's).
from solar.ir import kernel, Tensor, Dim


# LayerNorm over the last D elements of each of A rows (biased variance, as PyTorch).
# Per element: 3 (statistics) + 4 (centre, scale, weight, bias); per row: 7.
@kernel
def layer_norm(X: Tensor("A,D"), W: Tensor("D"), B: Tensor("D"), eps: float) -> Tensor("A,D", dtype="fp32"):
    S = Tensor(A=X.shape[0], dtype="fp64")
    Q = Tensor(A=X.shape[0], dtype="fp64")
    M = Tensor(A=X.shape[0], dtype="fp64")
    R = Tensor(A=X.shape[0], dtype="fp64")
    Y = Tensor(A=X.shape[0], D=X.shape[1], dtype="fp32")
    for a in Dim("A", parallel=True):
        for d in Dim("D"):
            S[a] += X[a, d]
    for a in Dim("A", parallel=True):
        for d in Dim("D"):
            Q[a] += X[a, d] * X[a, d]
    for a in Dim("A", parallel=True):
        M[a] = S[a] / size("D")
    for a in Dim("A", parallel=True):
        R[a] = rsqrt(max(Q[a] / size("D") - M[a] * M[a], 0.0) + eps)
    for a in Dim("A", parallel=True):
        for d in Dim("D", parallel=True):
            Y[a, d] = (X[a, d] - M[a]) * R[a] * W[d] + B[d]
    return Y


# A training step's layer norm (the joint forward-backward graph): as layer_norm, and also
# each row's mean and reciprocal standard deviation, which the backward pass reads.
@kernel
def layer_norm_saved(X: Tensor("A,D"), W: Tensor("D"), B: Tensor("D"), eps: float) -> (Tensor("A,D", dtype="fp32"), Tensor("A", dtype="fp32"), Tensor("A", dtype="fp32")):
    S = Tensor(A=X.shape[0], dtype="fp64")
    Q = Tensor(A=X.shape[0], dtype="fp64")
    M = Tensor(A=X.shape[0], dtype="fp32")
    R = Tensor(A=X.shape[0], dtype="fp32")
    Y = Tensor(A=X.shape[0], D=X.shape[1], dtype="fp32")
    for a in Dim("A", parallel=True):
        for d in Dim("D"):
            S[a] += X[a, d]
    for a in Dim("A", parallel=True):
        for d in Dim("D"):
            Q[a] += X[a, d] * X[a, d]
    for a in Dim("A", parallel=True):
        M[a] = S[a] / size("D")
    for a in Dim("A", parallel=True):
        R[a] = rsqrt(max(Q[a] / size("D") - S[a] / size("D") * (S[a] / size("D")), 0.0) + eps)
    for a in Dim("A", parallel=True):
        for d in Dim("D", parallel=True):
            Y[a, d] = (X[a, d] - M[a]) * R[a] * W[d] + B[d]
    return Y, M, R


# Without weight and bias. Per element: 3 + 2 (one multiply-add: x * rstd - mean * rstd).
@kernel
def layer_norm_nobias(X: Tensor("A,D"), eps: float) -> Tensor("A,D", dtype="fp32"):
    S = Tensor(A=X.shape[0], dtype="fp64")
    Q = Tensor(A=X.shape[0], dtype="fp64")
    M = Tensor(A=X.shape[0], dtype="fp64")
    R = Tensor(A=X.shape[0], dtype="fp64")
    Sh = Tensor(A=X.shape[0], dtype="fp64")
    Y = Tensor(A=X.shape[0], D=X.shape[1], dtype="fp32")
    for a in Dim("A", parallel=True):
        for d in Dim("D"):
            S[a] += X[a, d]
    for a in Dim("A", parallel=True):
        for d in Dim("D"):
            Q[a] += X[a, d] * X[a, d]
    for a in Dim("A", parallel=True):
        M[a] = S[a] / size("D")
    for a in Dim("A", parallel=True):
        R[a] = rsqrt(max(Q[a] / size("D") - M[a] * M[a], 0.0) + eps)
    for a in Dim("A", parallel=True):
        Sh[a] = -M[a] * R[a]
    for a in Dim("A", parallel=True):
        for d in Dim("D", parallel=True):
            Y[a, d] = X[a, d] * R[a] + Sh[a]
    return Y


# BatchNorm in training mode (what the harness runs): statistics over N and the spatial
# elements S of each channel C; biased variance; affine weight and bias.
# Per element: 3 (statistics) + 2 (x * scale + shift); per channel: 10.
@kernel
def batch_norm_train(X: Tensor("N,C,S"), W: Tensor("C"), B: Tensor("C"), eps: float) -> Tensor("N,C,S", dtype="fp32"):
    Sm = Tensor(C=X.shape[1], dtype="fp64")
    Q = Tensor(C=X.shape[1], dtype="fp64")
    M = Tensor(C=X.shape[1], dtype="fp64")
    A = Tensor(C=X.shape[1], dtype="fp64")
    Sh = Tensor(C=X.shape[1], dtype="fp64")
    Y = Tensor(N=X.shape[0], C=X.shape[1], S=X.shape[2], dtype="fp32")
    for c in Dim("C", parallel=True):
        for n in Dim("N"):
            for s in Dim("S"):
                Sm[c] += X[n, c, s]
    for c in Dim("C", parallel=True):
        for n in Dim("N"):
            for s in Dim("S"):
                Q[c] += X[n, c, s] * X[n, c, s]
    for c in Dim("C", parallel=True):
        M[c] = Sm[c] / (size("N") * size("S"))
    for c in Dim("C", parallel=True):
        A[c] = W[c] * rsqrt(max(Q[c] / (size("N") * size("S")) - M[c] * M[c], 0.0) + eps)
    for c in Dim("C", parallel=True):
        Sh[c] = B[c] - M[c] * A[c]
    for n in Dim("N", parallel=True):
        for c in Dim("C", parallel=True):
            for s in Dim("S", parallel=True):
                Y[n, c, s] = X[n, c, s] * A[c] + Sh[c]
    return Y


# Training mode with running statistics (track_running_stats, the default): also returns
# the updated running mean and variance, (1 - momentum) * old + momentum * batch value (the
# variance unbiased, as PyTorch's): 3 more per channel, and the buffers are read and written.
@kernel
def batch_norm_train_stats(X: Tensor("N,C,S"), W: Tensor("C"), B: Tensor("C"), RM: Tensor("C"), RV: Tensor("C"), momentum: float, eps: float) -> (Tensor("N,C,S", dtype="fp32"), Tensor("C", dtype="fp32"), Tensor("C", dtype="fp32")):
    Sm = Tensor(C=X.shape[1], dtype="fp64")
    Q = Tensor(C=X.shape[1], dtype="fp64")
    M = Tensor(C=X.shape[1], dtype="fp64")
    V = Tensor(C=X.shape[1], dtype="fp64")
    A = Tensor(C=X.shape[1], dtype="fp64")
    Sh = Tensor(C=X.shape[1], dtype="fp64")
    Y = Tensor(N=X.shape[0], C=X.shape[1], S=X.shape[2], dtype="fp32")
    RMo = Tensor(C=X.shape[1], dtype="fp32")
    RVo = Tensor(C=X.shape[1], dtype="fp32")
    for c in Dim("C", parallel=True):
        for n in Dim("N"):
            for s in Dim("S"):
                Sm[c] += X[n, c, s]
    for c in Dim("C", parallel=True):
        for n in Dim("N"):
            for s in Dim("S"):
                Q[c] += X[n, c, s] * X[n, c, s]
    for c in Dim("C", parallel=True):
        M[c] = Sm[c] / (size("N") * size("S"))
    for c in Dim("C", parallel=True):
        V[c] = max(Q[c] / (size("N") * size("S")) - M[c] * M[c], 0.0)
    for c in Dim("C", parallel=True):
        A[c] = W[c] * rsqrt(V[c] + eps)
    for c in Dim("C", parallel=True):
        Sh[c] = B[c] - M[c] * A[c]
    for n in Dim("N", parallel=True):
        for c in Dim("C", parallel=True):
            for s in Dim("S", parallel=True):
                Y[n, c, s] = X[n, c, s] * A[c] + Sh[c]
    for c in Dim("C", parallel=True):
        RMo[c] = (1.0 - momentum) * RM[c] + momentum * M[c]
    for c in Dim("C", parallel=True):
        RVo[c] = (1.0 - momentum) * RV[c] + momentum * (size("N") * size("S")) / (size("N") * size("S") - 1) * V[c]
    return Y, RMo, RVo


# A training step's batch norm (the joint forward-backward graph): as batch_norm_train_stats,
# and also the batch mean and inverse standard deviation the backward pass reads (saved
# statistics, PyTorch's save_mean and save_invstd): 1 more per channel.
@kernel
def batch_norm_train_saved(X: Tensor("N,C,S"), W: Tensor("C"), B: Tensor("C"), RM: Tensor("C"), RV: Tensor("C"), momentum: float, eps: float) -> (Tensor("N,C,S", dtype="fp32"), Tensor("C", dtype="fp32"), Tensor("C", dtype="fp32"), Tensor("C", dtype="fp32"), Tensor("C", dtype="fp32")):
    Sm = Tensor(C=X.shape[1], dtype="fp64")
    Q = Tensor(C=X.shape[1], dtype="fp64")
    V = Tensor(C=X.shape[1], dtype="fp64")
    A = Tensor(C=X.shape[1], dtype="fp64")
    Sh = Tensor(C=X.shape[1], dtype="fp64")
    Y = Tensor(N=X.shape[0], C=X.shape[1], S=X.shape[2], dtype="fp32")
    M = Tensor(C=X.shape[1], dtype="fp32")
    I = Tensor(C=X.shape[1], dtype="fp32")
    RMo = Tensor(C=X.shape[1], dtype="fp32")
    RVo = Tensor(C=X.shape[1], dtype="fp32")
    for c in Dim("C", parallel=True):
        for n in Dim("N"):
            for s in Dim("S"):
                Sm[c] += X[n, c, s]
    for c in Dim("C", parallel=True):
        for n in Dim("N"):
            for s in Dim("S"):
                Q[c] += X[n, c, s] * X[n, c, s]
    for c in Dim("C", parallel=True):
        M[c] = Sm[c] / (size("N") * size("S"))
    for c in Dim("C", parallel=True):
        V[c] = max(Q[c] / (size("N") * size("S")) - M[c] * M[c], 0.0)
    for c in Dim("C", parallel=True):
        I[c] = rsqrt(V[c] + eps)
    for c in Dim("C", parallel=True):
        A[c] = W[c] * I[c]
    for c in Dim("C", parallel=True):
        Sh[c] = B[c] - M[c] * A[c]
    for n in Dim("N", parallel=True):
        for c in Dim("C", parallel=True):
            for s in Dim("S", parallel=True):
                Y[n, c, s] = X[n, c, s] * A[c] + Sh[c]
    for c in Dim("C", parallel=True):
        RMo[c] = (1.0 - momentum) * RM[c] + momentum * M[c]
    for c in Dim("C", parallel=True):
        RVo[c] = (1.0 - momentum) * RV[c] + momentum * (size("N") * size("S")) / (size("N") * size("S") - 1) * V[c]
    return Y, M, I, RMo, RVo


# BatchNorm with running statistics (eval mode): per channel scale and shift (5), then one
# multiply-add per element (2).
@kernel
def batch_norm_eval(X: Tensor("N,C,S"), W: Tensor("C"), B: Tensor("C"), RM: Tensor("C"), RV: Tensor("C"), eps: float) -> Tensor("N,C,S", dtype="fp32"):
    A = Tensor(C=X.shape[1], dtype="fp64")
    Sh = Tensor(C=X.shape[1], dtype="fp64")
    Y = Tensor(N=X.shape[0], C=X.shape[1], S=X.shape[2], dtype="fp32")
    for c in Dim("C", parallel=True):
        A[c] = W[c] * rsqrt(RV[c] + eps)
    for c in Dim("C", parallel=True):
        Sh[c] = B[c] - RM[c] * A[c]
    for n in Dim("N", parallel=True):
        for c in Dim("C", parallel=True):
            for s in Dim("S", parallel=True):
                Y[n, c, s] = X[n, c, s] * A[c] + Sh[c]
    return Y


# GroupNorm: statistics per (sample N, group G) over the group's channels C and spatial S.
# Per element: 3 + 2; per (sample, channel): 3 (its scale and shift); per (sample, group): 7.
@kernel
def group_norm(X: Tensor("N,G,C,S"), W: Tensor("G,C"), B: Tensor("G,C"), eps: float) -> Tensor("N,G,C,S", dtype="fp32"):
    Sm = Tensor(N=X.shape[0], G=X.shape[1], dtype="fp64")
    Q = Tensor(N=X.shape[0], G=X.shape[1], dtype="fp64")
    M = Tensor(N=X.shape[0], G=X.shape[1], dtype="fp64")
    R = Tensor(N=X.shape[0], G=X.shape[1], dtype="fp64")
    A = Tensor(N=X.shape[0], G=X.shape[1], C=X.shape[2], dtype="fp64")
    Sh = Tensor(N=X.shape[0], G=X.shape[1], C=X.shape[2], dtype="fp64")
    Y = Tensor(N=X.shape[0], G=X.shape[1], C=X.shape[2], S=X.shape[3], dtype="fp32")
    for n in Dim("N", parallel=True):
        for g in Dim("G", parallel=True):
            for c in Dim("C"):
                for s in Dim("S"):
                    Sm[n, g] += X[n, g, c, s]
    for n in Dim("N", parallel=True):
        for g in Dim("G", parallel=True):
            for c in Dim("C"):
                for s in Dim("S"):
                    Q[n, g] += X[n, g, c, s] * X[n, g, c, s]
    for n in Dim("N", parallel=True):
        for g in Dim("G", parallel=True):
            M[n, g] = Sm[n, g] / (size("C") * size("S"))
    for n in Dim("N", parallel=True):
        for g in Dim("G", parallel=True):
            R[n, g] = rsqrt(max(Q[n, g] / (size("C") * size("S")) - M[n, g] * M[n, g], 0.0) + eps)
    for n in Dim("N", parallel=True):
        for g in Dim("G", parallel=True):
            for c in Dim("C", parallel=True):
                A[n, g, c] = R[n, g] * W[g, c]
    for n in Dim("N", parallel=True):
        for g in Dim("G", parallel=True):
            for c in Dim("C", parallel=True):
                Sh[n, g, c] = B[g, c] - M[n, g] * A[n, g, c]
    for n in Dim("N", parallel=True):
        for g in Dim("G", parallel=True):
            for c in Dim("C", parallel=True):
                for s in Dim("S", parallel=True):
                    Y[n, g, c, s] = X[n, g, c, s] * A[n, g, c] + Sh[n, g, c]
    return Y
