# Layer normalisation over the last dim with scale gamma and shift beta.
from solar.ir import kernel, Tensor, Dim

@kernel
def layer_norm(X: Tensor("N,D"), G: Tensor("D"), Bt: Tensor("D"), eps: float) -> Tensor("N,D"):
    S1 = Tensor(N=X.shape[0], fill=0)
    Mu = Tensor(N=X.shape[0])
    S2 = Tensor(N=X.shape[0], fill=0)
    Rs = Tensor(N=X.shape[0])
    Y = Tensor(N=X.shape[0], D=X.shape[1])
    for i in Dim("N", parallel=True):
        for d in Dim("D"):
            S1[i] += X[i, d]
    for i in Dim("N", parallel=True):
        Mu[i] = S1[i] / size("D")
    for i in Dim("N", parallel=True):
        for d in Dim("D"):
            S2[i] += (X[i, d] - Mu[i]) * (X[i, d] - Mu[i])
    for i in Dim("N", parallel=True):
        Rs[i] = rsqrt(S2[i] / size("D") + eps)
    for i in Dim("N", parallel=True):
        for d in Dim("D"):
            Y[i, d] = (X[i, d] - Mu[i]) * Rs[i] * G[d] + Bt[d]
    return Y

DIMS = {"N": 512, "D": 256}

def model(x: Tensor("N,D", role="input"), gamma: Tensor("D", role="input"),
          beta: Tensor("D", role="input"), eps: float = 1e-5):
    return layer_norm(x, gamma, beta, eps)
