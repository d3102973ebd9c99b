# Layer norm over the last dim with gamma and beta (eps = 1e-5): mean, variance, normalise.
from solar.ir import kernel, Tensor, Dim

@kernel
def layernorm(X: Tensor("R,D"), G: Tensor("D"), Bt: Tensor("D"), eps: float) -> Tensor("R,D"):
    S1 = Tensor(R=X.shape[0], fill=0)
    Mu = Tensor(R=X.shape[0])
    S2 = Tensor(R=X.shape[0], fill=0)
    Rs = Tensor(R=X.shape[0])
    Y = Tensor(R=X.shape[0], D=X.shape[1])
    for r in Dim("R", parallel=True):
        for d in Dim("D"):
            S1[r] += X[r, d]
    for r in Dim("R", parallel=True):
        Mu[r] = S1[r] / size("D")
    for r in Dim("R", parallel=True):
        for d in Dim("D"):
            S2[r] += (X[r, d] - Mu[r]) * (X[r, d] - Mu[r])
    for r in Dim("R", parallel=True):
        Rs[r] = rsqrt(S2[r] / size("D") + eps)
    for r in Dim("R", parallel=True):
        for d in Dim("D"):
            Y[r, d] = (X[r, d] - Mu[r]) * Rs[r] * G[d] + Bt[d]
    return Y

DIMS = {"R": 256, "D": 4096}

def model(x: Tensor("R,D", role="input"), gamma: Tensor("D", role="input"),
          beta: Tensor("D", role="input"), eps: float = 1e-5):
    return layernorm(x, gamma, beta, eps)
