# LinearBiasMatmul: the paper's worked example (Figure 2b), verbatim.
#
# y = x @ fc_weight^T + fc_bias, then z = y @ D. Two kernels: `linear` (a bias-initialisation
# nest and a MAC nest) and `matmul` (one MAC nest). The intermediate y is the fusible edge.
# Reproduces the paper's numbers: 41,943,040 MACs, 83.9 MFLOP, 2.03 MB unfused, 0.99 MB fused.
from solar.ir import kernel, Tensor, Dim

@kernel
def linear(X: Tensor("B,M,K"), W: Tensor("N,K"), Bias: Tensor("N")) -> Tensor("B,M,N"):
    Y = Tensor(B=X.shape[0], M=X.shape[1], N=W.shape[0])
    for b in Dim("B", parallel=True):
        for m in Dim("M"):
            for n in Dim("N"):
                Y[b, m, n] = Bias[n]
    for b in Dim("B", parallel=True):
        for m in Dim("M"):
            for n in Dim("N"):
                for k in Dim("K"):
                    Y[b, m, n] += X[b, m, k] * W[n, k]
    return Y

@kernel
def matmul(Y: Tensor("B,M,N"), D: Tensor("N,P")) -> Tensor("B,M,P"):
    Z = Tensor(B=Y.shape[0], M=Y.shape[1], P=D.shape[1])
    for b in Dim("B", parallel=True):
        for m in Dim("M"):
            for p in Dim("P"):
                for n in Dim("N"):
                    Z[b, m, p] += Y[b, m, n] * D[n, p]
    return Z

DIMS = {"B": 2, "M": 128, "K": 256, "N": 512, "P": 64}

def model(x: Tensor("B,M,K", role="input"), fc_weight: Tensor("N,K", role="weight"),
          fc_bias: Tensor("N", role="weight"), D: Tensor("N,P", role="weight")):
    y = linear(x, fc_weight, fc_bias)
    return matmul(y, D)
