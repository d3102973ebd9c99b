# Normalisations of the PyTorch front end. The lowering reshapes to the layouts below.
# Statistics accumulate in fp64 locals (on chip: no traffic; see reduce.py).
from solar.ir import kernel, Tensor, Dim


# LayerNorm over the last D elements of each of A rows (biased variance, as PyTorch).
@kernel
def layer_norm(X: Tensor("A,D"), W: Tensor("D"), B: Tensor("D"), eps: float) -> Tensor("A,D", dtype="fp32"):
    S = Tensor(A=X.shape[0], dtype="fp64")
    V = Tensor(A=X.shape[0], dtype="fp64")
    Y = Tensor(A=X.shape[0], D=X.shape[1], dtype="fp32")
    for a in Dim("A", parallel=True):
        for d in Dim("D"):
            S[a] += X[a, d]
    for a in Dim("A", parallel=True):
        for d in Dim("D"):
            V[a] += (X[a, d] - S[a] / size("D")) * (X[a, d] - S[a] / size("D"))
    for a in Dim("A", parallel=True):
        for d in Dim("D", parallel=True):
            Y[a, d] = (X[a, d] - S[a] / size("D")) * rsqrt(V[a] / size("D") + eps) * W[d] + B[d]
    return Y


@kernel
def layer_norm_nobias(X: Tensor("A,D"), eps: float) -> Tensor("A,D", dtype="fp32"):
    S = Tensor(A=X.shape[0], dtype="fp64")
    V = Tensor(A=X.shape[0], dtype="fp64")
    Y = Tensor(A=X.shape[0], D=X.shape[1], dtype="fp32")
    for a in Dim("A", parallel=True):
        for d in Dim("D"):
            S[a] += X[a, d]
    for a in Dim("A", parallel=True):
        for d in Dim("D"):
            V[a] += (X[a, d] - S[a] / size("D")) * (X[a, d] - S[a] / size("D"))
    for a in Dim("A", parallel=True):
        for d in Dim("D", parallel=True):
            Y[a, d] = (X[a, d] - S[a] / size("D")) * rsqrt(V[a] / size("D") + eps)
    return Y


# BatchNorm in training mode (what the harness runs): statistics over N and the spatial
# elements S of each channel C; biased variance; affine weight and bias.
@kernel
def batch_norm_train(X: Tensor("N,C,S"), W: Tensor("C"), B: Tensor("C"), eps: float) -> Tensor("N,C,S", dtype="fp32"):
    M = Tensor(C=X.shape[1], dtype="fp64")
    V = Tensor(C=X.shape[1], dtype="fp64")
    Y = Tensor(N=X.shape[0], C=X.shape[1], S=X.shape[2], dtype="fp32")
    for c in Dim("C", parallel=True):
        for n in Dim("N"):
            for s in Dim("S"):
                M[c] += X[n, c, s]
    for c in Dim("C", parallel=True):
        for n in Dim("N"):
            for s in Dim("S"):
                V[c] += (X[n, c, s] - M[c] / (size("N") * size("S"))) * (X[n, c, s] - M[c] / (size("N") * size("S")))
    for n in Dim("N", parallel=True):
        for c in Dim("C", parallel=True):
            for s in Dim("S", parallel=True):
                Y[n, c, s] = (X[n, c, s] - M[c] / (size("N") * size("S"))) * rsqrt(V[c] / (size("N") * size("S")) + eps) * W[c] + B[c]
    return Y


# BatchNorm with running statistics (eval mode or track_running_stats use).
@kernel
def batch_norm_eval(X: Tensor("N,C,S"), W: Tensor("C"), B: Tensor("C"), RM: Tensor("C"), RV: Tensor("C"), eps: float) -> Tensor("N,C,S", dtype="fp32"):
    Y = Tensor(N=X.shape[0], C=X.shape[1], S=X.shape[2], dtype="fp32")
    for n in Dim("N", parallel=True):
        for c in Dim("C", parallel=True):
            for s in Dim("S", parallel=True):
                Y[n, c, s] = (X[n, c, s] - RM[c]) * rsqrt(RV[c] + eps) * W[c] + B[c]
    return Y


# GroupNorm: statistics per (sample N, group G) over the group's channels C and spatial S.
@kernel
def group_norm(X: Tensor("N,G,C,S"), W: Tensor("G,C"), B: Tensor("G,C"), eps: float) -> Tensor("N,G,C,S", dtype="fp32"):
    M = Tensor(N=X.shape[0], G=X.shape[1], dtype="fp64")
    V = Tensor(N=X.shape[0], G=X.shape[1], dtype="fp64")
    Y = Tensor(N=X.shape[0], G=X.shape[1], C=X.shape[2], S=X.shape[3], dtype="fp32")
    for n in Dim("N", parallel=True):
        for g in Dim("G", parallel=True):
            for c in Dim("C"):
                for s in Dim("S"):
                    M[n, g] += X[n, g, c, s]
    for n in Dim("N", parallel=True):
        for g in Dim("G", parallel=True):
            for c in Dim("C"):
                for s in Dim("S"):
                    V[n, g] += (X[n, g, c, s] - M[n, g] / (size("C") * size("S"))) * (X[n, g, c, s] - M[n, g] / (size("C") * size("S")))
    for n in Dim("N", parallel=True):
        for g in Dim("G", parallel=True):
            for c in Dim("C", parallel=True):
                for s in Dim("S", parallel=True):
                    Y[n, g, c, s] = (X[n, g, c, s] - M[n, g] / (size("C") * size("S"))) * rsqrt(V[n, g] / (size("C") * size("S")) + eps) * W[g, c] + B[g, c]
    return Y
