# Row argmax (first index of the maximum), int64 result.
from solar.ir import kernel, Tensor, Dim

@kernel
def argmax(X: Tensor("N,D")) -> Tensor("N", dtype="int64"):
    M = Tensor(N=X.shape[0], fill=-inf)
    I = Tensor(N=X.shape[0], dtype="int64", fill=0)
    for i in Dim("N", parallel=True):
        for j in Dim("D"):
            I[i] = select(X[i, j] > M[i], j, I[i])
            M[i] = max(M[i], X[i, j])
    return I

DIMS = {"N": 512, "D": 256}

def model(x: Tensor("N,D", role="input")):
    return argmax(x)
