# Shape: line 16 passes a rank-2 tensor to relu3, whose X is annotated with rank 3.
from solar.ir import kernel, Tensor, Dim

@kernel
def relu3(X: Tensor("B,M,N")) -> Tensor("B,M,N"):
    Y = Tensor(B=X.shape[0], M=X.shape[1], N=X.shape[2])
    for b in Dim("B", parallel=True):
        for i in Dim("M"):
            for j in Dim("N"):
                Y[b, i, j] = max(X[b, i, j], 0.0)
    return Y

DIMS = {"M": 4, "N": 8}

def model(x: Tensor("M,N", role="input")):
    return relu3(x)
