# Dim mismatch: at mm#0 (line 16) dim K is bound to 32 by A and to 16 by B.
from solar.ir import kernel, Tensor, Dim

@kernel
def mm(A: Tensor("M,K"), B: Tensor("K,N")) -> Tensor("M,N"):
    C = Tensor(M=A.shape[0], N=B.shape[1])
    for i in Dim("M", parallel=True):
        for j in Dim("N", parallel=True):
            for k in Dim("K"):
                C[i, j] += A[i, k] * B[k, j]
    return C

DIMS = {"M": 4, "K": 32, "J": 16, "N": 8}

def model(a: Tensor("M,K", role="input"), b: Tensor("J,N", role="weight")):
    return mm(a, b)
