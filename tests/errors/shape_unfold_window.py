# Shape: the unfold on line 16 asks for windows of 12 elements along N, which has 8.
from solar.ir import kernel, Tensor, Dim

@kernel
def relu(X: Tensor("M,N,W")) -> Tensor("M,N,W"):
    Y = Tensor(M=X.shape[0], N=X.shape[1], W=X.shape[2])
    for i in Dim("M", parallel=True):
        for j in Dim("N", parallel=True):
            for k in Dim("W", parallel=True):
                Y[i, j, k] = max(X[i, j, k], 0.0)
    return Y

DIMS = {"M": 4, "N": 8}

def model(x: Tensor("M,N", role="input")):
    return relu(unfold(x, dim="N", size=12, step=2))
