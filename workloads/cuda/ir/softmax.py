# Row softmax of a [BATCH, DIM] matrix, as the CUDA kernel computes it (one block per row):
# pass 1 the row max, pass 2 the sum of exponentials, then 1/sum once per row, pass 3
# recomputes exp(x - max) and scales it by 1/sum. Reads X once, writes Y once.
from solar.ir import kernel, Tensor, Dim

@kernel
def softmax(X: Tensor("B,D")) -> Tensor("B,D"):
    M = Tensor(B=X.shape[0], fill=-inf)
    S = Tensor(B=X.shape[0], fill=0)
    Inv = Tensor(B=X.shape[0])
    Y = Tensor(B=X.shape[0], D=X.shape[1])
    for r in Dim("B", parallel=True):
        for j in Dim("D"):
            M[r] = max(M[r], X[r, j])
    for r in Dim("B", parallel=True):
        for j in Dim("D"):
            S[r] += exp(X[r, j] - M[r])
    for r in Dim("B", parallel=True):
        Inv[r] = 1.0 / S[r]
    for r in Dim("B", parallel=True):
        for j in Dim("D"):
            Y[r, j] = exp(X[r, j] - M[r]) * Inv[r]
    return Y

DIMS = {"B": 16, "D": 16384}

def model(x: Tensor("B,D", role="input")):
    return softmax(x)
