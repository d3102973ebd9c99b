# Non-affine index: `X[i * j, j]` on line 9 multiplies two loop variables.
from solar.ir import kernel, Tensor, Dim

@kernel
def bad(X: Tensor("M,N")) -> Tensor("M,N"):
    Y = Tensor(M=X.shape[0], N=X.shape[1])
    for i in Dim("M", parallel=True):
        for j in Dim("N"):
            Y[i, j] = X[i * j, j]
    return Y

DIMS = {"M": 4, "N": 8}

def model(x: Tensor("M,N", role="input")):
    return bad(x)
