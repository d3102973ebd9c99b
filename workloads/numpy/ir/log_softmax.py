# Row log-softmax: x - max - log(sum(exp(x - max))).
from solar.ir import kernel, Tensor, Dim

@kernel
def log_softmax(X: Tensor("N,D")) -> Tensor("N,D"):
    M = Tensor(N=X.shape[0], fill=-inf)
    S = Tensor(N=X.shape[0], fill=0)
    L = Tensor(N=X.shape[0])
    Y = Tensor(N=X.shape[0], D=X.shape[1])
    for i in Dim("N", parallel=True):
        for j in Dim("D"):
            M[i] = max(M[i], X[i, j])
    for i in Dim("N", parallel=True):
        for j in Dim("D"):
            S[i] += exp(X[i, j] - M[i])
    for i in Dim("N", parallel=True):
        L[i] = M[i] + log(S[i])
    for i in Dim("N", parallel=True):
        for j in Dim("D"):
            Y[i, j] = X[i, j] - L[i]
    return Y

DIMS = {"N": 512, "D": 256}

def model(x: Tensor("N,D", role="input")):
    return log_softmax(x)
