# Row softmax in the three-pass form (max, sum of exponentials, normalise).
from solar.ir import kernel, Tensor, Dim

@kernel
def softmax(X: Tensor("N,D")) -> Tensor("N,D"):
    M = Tensor(N=X.shape[0], fill=-inf)
    S = Tensor(N=X.shape[0], fill=0)
    Y = Tensor(N=X.shape[0], D=X.shape[1])
    for i in Dim("N", parallel=True):
        for j in Dim("D"):
            M[i] = max(M[i], X[i, j])
    for i in Dim("N", parallel=True):
        for j in Dim("D"):
            S[i] += exp(X[i, j] - M[i])
    for i in Dim("N", parallel=True):
        for j in Dim("D"):
            Y[i, j] = exp(X[i, j] - M[i]) / S[i]
    return Y

DIMS = {"N": 512, "D": 256}

def model(x: Tensor("N,D", role="input")):
    return softmax(x)
