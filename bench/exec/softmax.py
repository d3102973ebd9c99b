# Executor benchmark: softmax over the rows of a 4096 x 4096 fp32 matrix (stable three-pass
# form: row max, sum of exponentials, normalise). Torch: torch.softmax(x, dim=-1).
# IR builtins (size, exp, inf, ...) are names the IR defines, not Python ones.
# ruff: noqa: F821, F841
from solar.ir import Dim, Tensor, kernel


@kernel
def softmax(X: Tensor("R,C")) -> Tensor("R,C"):
    M = Tensor(R=X.shape[0], fill=-inf)
    S = Tensor(R=X.shape[0], fill=0)
    Y = Tensor(R=X.shape[0], C=X.shape[1])
    for i in Dim("R", parallel=True):
        for j in Dim("C"):
            M[i] = max(M[i], X[i, j])
    for i in Dim("R", parallel=True):
        for j in Dim("C"):
            S[i] += exp(X[i, j] - M[i])
    for i in Dim("R", parallel=True):
        for j in Dim("C", parallel=True):
            Y[i, j] = exp(X[i, j] - M[i]) / S[i]
    return Y


DIMS = {"R": 4096, "C": 4096}


def model(x: Tensor("R,C", role="input")):
    return softmax(x)
