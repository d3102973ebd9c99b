# Population variance of every row: mean of squared deviations from the row mean.
from solar.ir import kernel, Tensor, Dim

@kernel
def row_variance(X: Tensor("N,D")) -> Tensor("N"):
    S = Tensor(N=X.shape[0], fill=0)
    Mu = Tensor(N=X.shape[0])
    V = Tensor(N=X.shape[0], fill=0)
    for i in Dim("N", parallel=True):
        for d in Dim("D"):
            S[i] += X[i, d]
    for i in Dim("N", parallel=True):
        Mu[i] = S[i] / size("D")
    for i in Dim("N", parallel=True):
        for d in Dim("D"):
            V[i] += (X[i, d] - Mu[i]) * (X[i, d] - Mu[i])
    for i in Dim("N", parallel=True):
        V[i] = V[i] / size("D")
    return V

DIMS = {"N": 512, "D": 256}

def model(x: Tensor("N,D", role="input")):
    return row_variance(x)
