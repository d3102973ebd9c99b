# Per-row sum, mean and max: one kernel with three outputs.
from solar.ir import kernel, Tensor, Dim

@kernel
def row_stats(X: Tensor("N,D")) -> (Tensor("N"), Tensor("N"), Tensor("N")):
    S = Tensor(N=X.shape[0], fill=0)
    Mean = Tensor(N=X.shape[0])
    Mx = Tensor(N=X.shape[0], fill=-inf)
    for i in Dim("N", parallel=True):
        for j in Dim("D"):
            S[i] += X[i, j]
            Mx[i] = max(Mx[i], X[i, j])
    for i in Dim("N", parallel=True):
        Mean[i] = S[i] / size("D")
    return S, Mean, Mx

DIMS = {"N": 512, "D": 256}

def model(x: Tensor("N,D", role="input")):
    s, mean, mx = row_stats(x)
    return s, mean, mx
