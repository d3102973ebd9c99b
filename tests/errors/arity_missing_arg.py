# Call arity: line 16 calls add(X, Z) with only one argument (Z is missing).
from solar.ir import kernel, Tensor, Dim

@kernel
def add(X: Tensor("M,N"), Z: Tensor("M,N")) -> Tensor("M,N"):
    Y = Tensor(M=X.shape[0], N=X.shape[1])
    for i in Dim("M", parallel=True):
        for j in Dim("N"):
            Y[i, j] = X[i, j] + Z[i, j]
    return Y

DIMS = {"M": 4, "N": 8}

def model(x: Tensor("M,N", role="input")):
    y = x
    return add(y)
