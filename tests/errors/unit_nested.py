# Unsupported: a unit opened inside another unit (line 17); units do not nest.
from solar.ir import kernel, Tensor, Dim

@kernel
def relu(X: Tensor("M,N")) -> Tensor("M,N"):
    Y = Tensor(M=X.shape[0], N=X.shape[1])
    for i in Dim("M", parallel=True):
        for j in Dim("N"):
            Y[i, j] = max(X[i, j], 0.0)
    return Y

DIMS = {"M": 4, "N": 8}

def model(x: Tensor("M,N", role="input")):
    with unit("outer"):
        y = relu(x)
        with unit("inner"):
            y = relu(y)
    return y
