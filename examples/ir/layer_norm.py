# Layer normalisation over the last dim of a [B, S, D] activation.
#
# Shows: reshape views at model level ([B, S, D] -> [T, D] -> [B, S, D], zero bytes), 1-D
# nests over rows (the mean and the reciprocal standard deviation), local statistics that
# never reach DRAM, and int/float scalar parameters (`n` = D, `eps`).
# Per element: (1 add) + (1 add + 1 sub + 1 pow) + (1 sub, 2 mul, 1 add) = 5 add, 2 mul, 1 pow;
# per row: 1 div (mean) + 1 div, 1 add, 1 rsqrt.
from solar.ir import kernel, Tensor, Dim

@kernel
def layer_norm(X: Tensor("T,D"), G: Tensor("D"), Bt: Tensor("D"), n: int,
               eps: float) -> Tensor("T,D"):
    S1 = Tensor(T=X.shape[0])
    Mu = Tensor(T=X.shape[0])
    S2 = Tensor(T=X.shape[0])
    Rs = Tensor(T=X.shape[0])
    Y = Tensor(T=X.shape[0], D=X.shape[1])
    for t in Dim("T", parallel=True):
        for d in Dim("D"):
            S1[t] += X[t, d]
    for t in Dim("T", parallel=True):
        Mu[t] = S1[t] / n
    for t in Dim("T", parallel=True):
        for d in Dim("D"):
            S2[t] += (X[t, d] - Mu[t]) ** 2
    for t in Dim("T", parallel=True):
        Rs[t] = rsqrt(S2[t] / n + eps)
    for t in Dim("T", parallel=True):
        for d in Dim("D"):
            Y[t, d] = (X[t, d] - Mu[t]) * Rs[t] * G[d] + Bt[d]
    return Y

DIMS = {"B": 4, "S": 128, "D": 768}

def model(x: Tensor("B,S,D", role="input"), gamma: Tensor("D", role="weight"),
          beta: Tensor("D", role="weight"), eps: float = 1e-5):
    b, s, d = x.shape[0], x.shape[1], x.shape[2]
    rows = reshape(x, "T,D", T=b * s)
    y = layer_norm(rows, gamma, beta, d, eps)
    return reshape(y, "B,S,D", B=b, S=s)
