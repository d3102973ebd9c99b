# Kernel body: `t = X[i, j] * 2.0` on line 9 assigns a scalar temporary (write a tensor element).
from solar.ir import kernel, Tensor, Dim

@kernel
def double(X: Tensor("M,N")) -> Tensor("M,N"):
    Y = Tensor(M=X.shape[0], N=X.shape[1])
    for i in Dim("M", parallel=True):
        for j in Dim("N"):
            t = X[i, j] * 2.0
            Y[i, j] = t
    return Y

DIMS = {"M": 4, "N": 8}

def model(x: Tensor("M,N", role="input")):
    return double(x)
