# C[M, N] = A[M, K] @ B[K, N] in fp32 (the shared-memory tiling changes no count).
from solar.ir import kernel, Tensor, Dim

@kernel
def matmul(A: Tensor("M,K"), B: Tensor("K,N")) -> Tensor("M,N"):
    C = Tensor(M=A.shape[0], N=B.shape[1], fill=0)
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            for k in Dim("K"):
                C[m, n] += A[m, k] * B[k, n]
    return C

DIMS = {"M": 512, "K": 256, "N": 384}

def model(a: Tensor("M,K", role="input"), b: Tensor("K,N", role="input")):
    return matmul(a, b)
