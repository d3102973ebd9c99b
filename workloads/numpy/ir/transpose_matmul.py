# x.T @ w for x [K, M], w [K, N]: the transpose is folded into the indexing (no copy).
from solar.ir import kernel, Tensor, Dim

@kernel
def matmul_tn(X: Tensor("K,M"), W: Tensor("K,N")) -> Tensor("M,N"):
    Y = Tensor(M=X.shape[1], N=W.shape[1], fill=0)
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            for k in Dim("K"):
                Y[m, n] += X[k, m] * W[k, n]
    return Y

DIMS = {"K": 256, "M": 128, "N": 96}

def model(x: Tensor("K,M", role="input"), w: Tensor("K,N", role="input")):
    return matmul_tn(x, w)
