# y = max(x, 0) over a [BATCH, DIM] matrix.
from solar.ir import kernel, Tensor, Dim

@kernel
def relu(X: Tensor("B,D")) -> Tensor("B,D"):
    Y = Tensor(B=X.shape[0], D=X.shape[1])
    for b in Dim("B", parallel=True):
        for d in Dim("D", parallel=True):
            Y[b, d] = max(X[b, d], 0.0)
    return Y

DIMS = {"B": 16, "D": 16384}

def model(x: Tensor("B,D", role="input")):
    return relu(x)
