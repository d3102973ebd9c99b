# Data-dependent guard: `if X[i, j] > 0:` on line 9 branches on a tensor value (use select).
from solar.ir import kernel, Tensor, Dim

@kernel
def relu(X: Tensor("M,N")) -> Tensor("M,N"):
    Y = Tensor(M=X.shape[0], N=X.shape[1])
    for i in Dim("M", parallel=True):
        for j in Dim("N"):
            if X[i, j] > 0:
                Y[i, j] = X[i, j]
    return Y

DIMS = {"M": 4, "N": 8}

def model(x: Tensor("M,N", role="input")):
    return relu(x)
