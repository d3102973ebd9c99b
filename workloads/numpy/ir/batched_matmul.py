# C[b] = A[b] @ B[b] for A [B, M, K], B [B, K, N].
from solar.ir import kernel, Tensor, Dim

@kernel
def bmm(A: Tensor("B,M,K"), Bm: Tensor("B,K,N")) -> Tensor("B,M,N"):
    C = Tensor(B=A.shape[0], M=A.shape[1], N=Bm.shape[2], fill=0)
    for b in Dim("B", parallel=True):
        for m in Dim("M", parallel=True):
            for n in Dim("N", parallel=True):
                for k in Dim("K"):
                    C[b, m, n] += A[b, m, k] * Bm[b, k, n]
    return C

DIMS = {"B": 8, "M": 64, "K": 128, "N": 96}

def model(a: Tensor("B,M,K", role="input"), b: Tensor("B,K,N", role="input")):
    return bmm(a, b)
