# Unsupported: a `while` loop in a kernel (line 8).
from solar.ir import kernel, Tensor, Dim

@kernel
def relu(X: Tensor("M,N")) -> Tensor("M,N"):
    Y = Tensor(M=X.shape[0], N=X.shape[1])
    for i in Dim("M", parallel=True):
        while i < 4:
            Y[i, 0] = max(X[i, 0], 0.0)
    return Y

DIMS = {"M": 4, "N": 8}

def model(x: Tensor("M,N", role="input")):
    return relu(x)
