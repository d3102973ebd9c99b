# Syntax error: `= =` on line 9 (an assignment with no right-hand side).
from solar.ir import kernel, Tensor, Dim

@kernel
def copy(X: Tensor("M,N")) -> Tensor("M,N"):
    Y = Tensor(M=X.shape[0], N=X.shape[1])
    for i in Dim("M", parallel=True):
        for j in Dim("N"):
            Y[i, j] = = X[i, j]
    return Y

DIMS = {"M": 4, "N": 8}

def model(x: Tensor("M,N", role="input")):
    return copy(x)
