# Overflow: mm on line 16 has 2^21 x 2^20 x 2^21 = 2^62 MACs; 2 x 2^62 FLOPs exceed 2^63 - 1.
from solar.ir import kernel, Tensor, Dim

@kernel
def mm(A: Tensor("M,K"), B: Tensor("K,N")) -> Tensor("M,N"):
    C = Tensor(M=A.shape[0], N=B.shape[1], fill=0)
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            for k in Dim("K"):
                C[m, n] += A[m, k] * B[k, n]
    return C

DIMS = {"M": 2097152, "K": 1048576, "N": 2097152}

def model(a: Tensor("M,K", role="input"), b: Tensor("K,N", role="weight")):
    return mm(a, b)
