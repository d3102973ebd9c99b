# Imperfect nest: the statement `S[i] = 0.0` on line 8 sits beside the inner loop.
from solar.ir import kernel, Tensor, Dim

@kernel
def rowsum(X: Tensor("M,N")) -> Tensor("M"):
    S = Tensor(M=X.shape[0])
    for i in Dim("M", parallel=True):
        S[i] = 0.0
        for j in Dim("N"):
            S[i] += X[i, j]
    return S

DIMS = {"M": 4, "N": 8}

def model(x: Tensor("M,N", role="input")):
    return rowsum(x)
