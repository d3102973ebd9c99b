# Executor benchmark: layer norm over the last dim of a 4096 x 4096 fp32 matrix, with weight
# and bias, eps 1e-5 (biased variance, as torch.nn.functional.layer_norm).
# IR builtins (size, exp, inf, ...) are names the IR defines, not Python ones.
# ruff: noqa: F821, F841
from solar.ir import Dim, Tensor, kernel

EPS = 1e-5


@kernel
def layer_norm(X: Tensor("T,D"), G: Tensor("D"), Bt: Tensor("D"), eps: float) -> Tensor("T,D"):
    S1 = Tensor(T=X.shape[0])
    Mu = Tensor(T=X.shape[0])
    S2 = Tensor(T=X.shape[0])
    Rs = Tensor(T=X.shape[0])
    Y = Tensor(T=X.shape[0], D=X.shape[1])
    for t in Dim("T", parallel=True):
        for d in Dim("D"):
            S1[t] += X[t, d]
    for t in Dim("T", parallel=True):
        Mu[t] = S1[t] / size("D")
    for t in Dim("T", parallel=True):
        for d in Dim("D"):
            S2[t] += (X[t, d] - Mu[t]) * (X[t, d] - Mu[t])
    for t in Dim("T", parallel=True):
        Rs[t] = rsqrt(S2[t] / size("D") + eps)
    for t in Dim("T", parallel=True):
        for d in Dim("D", parallel=True):
            Y[t, d] = (X[t, d] - Mu[t]) * Rs[t] * G[d] + Bt[d]
    return Y


DIMS = {"T": 4096, "D": 4096}


def model(
    x: Tensor("T,D", role="input"),
    gamma: Tensor("D", role="weight"),
    beta: Tensor("D", role="weight"),
):
    return layer_norm(x, gamma, beta, EPS)
