# Outer product of two vectors: Y[i, j] = a[i] * b[j] (no reduction, so not a MAC).
from solar.ir import kernel, Tensor, Dim

@kernel
def outer(A: Tensor("M"), B: Tensor("N")) -> Tensor("M,N"):
    Y = Tensor(M=A.shape[0], N=B.shape[0])
    for i in Dim("M", parallel=True):
        for j in Dim("N", parallel=True):
            Y[i, j] = A[i] * B[j]
    return Y

DIMS = {"M": 512, "N": 384}

def model(a: Tensor("M", role="input"), b: Tensor("N", role="input")):
    return outer(a, b)
