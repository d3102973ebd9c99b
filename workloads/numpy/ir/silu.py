# SiLU (swish): x * sigmoid(x).
from solar.ir import kernel, Tensor, Dim

@kernel
def silu(X: Tensor("N,D")) -> Tensor("N,D"):
    Y = Tensor(N=X.shape[0], D=X.shape[1])
    for i in Dim("N", parallel=True):
        for j in Dim("D", parallel=True):
            Y[i, j] = X[i, j] * sigmoid(X[i, j])
    return Y

DIMS = {"N": 512, "D": 256}

def model(x: Tensor("N,D", role="input")):
    return silu(x)
