# Unknown dim: the loop on line 9 runs over Dim("K"), which no parameter or allocation names.
from solar.ir import kernel, Tensor, Dim

@kernel
def rowsum(X: Tensor("M,N")) -> Tensor("M"):
    Y = Tensor(M=X.shape[0])
    for i in Dim("M", parallel=True):
        for j in Dim("N"):
            for k in Dim("K"):
                Y[i] += X[i, j]
    return Y

DIMS = {"M": 4, "N": 8}

def model(x: Tensor("M,N", role="input")):
    return rowsum(x)
