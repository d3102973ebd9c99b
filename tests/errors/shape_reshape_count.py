# Shape: the reshape on line 15 turns 4x8 = 32 elements into 4x6 = 24.
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
    y = reshape(x, "M,N", N=6)
    return relu(y)
