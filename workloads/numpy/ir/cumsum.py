# Inclusive prefix sum along the last dim (a sequential scan).
from solar.ir import kernel, Tensor, Dim

@kernel
def cumsum(X: Tensor("N,D")) -> Tensor("N,D"):
    Y = Tensor(N=X.shape[0], D=X.shape[1])
    for i in Dim("N", parallel=True):
        for j in Dim("D"):
            if j == 0:
                Y[i, j] = X[i, j]
            else:
                Y[i, j] = Y[i, j - 1] + X[i, j]
    return Y

DIMS = {"N": 128, "D": 512}

def model(x: Tensor("N,D", role="input")):
    return cumsum(x)
