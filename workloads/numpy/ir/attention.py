# Scaled dot-product attention softmax(Q K^T * scale) V, scale = 1/sqrt(64) = 0.125.
from solar.ir import kernel, Tensor, Dim

@kernel
def scores(Q: Tensor("B,S,D"), K: Tensor("B,T,D"), scale: float) -> Tensor("B,S,T"):
    A = Tensor(B=Q.shape[0], S=Q.shape[1], T=K.shape[1], fill=0)
    for b in Dim("B", parallel=True):
        for i in Dim("S", parallel=True):
            for j in Dim("T", parallel=True):
                for d in Dim("D"):
                    A[b, i, j] += Q[b, i, d] * K[b, j, d]
    for b in Dim("B", parallel=True):
        for i in Dim("S", parallel=True):
            for j in Dim("T", parallel=True):
                A[b, i, j] *= scale
    return A

@kernel
def softmax(X: Tensor("B,S,T")) -> Tensor("B,S,T"):
    M = Tensor(B=X.shape[0], S=X.shape[1], fill=-inf)
    Z = Tensor(B=X.shape[0], S=X.shape[1], fill=0)
    Y = Tensor(B=X.shape[0], S=X.shape[1], T=X.shape[2])
    for b in Dim("B", parallel=True):
        for i in Dim("S", parallel=True):
            for j in Dim("T"):
                M[b, i] = max(M[b, i], X[b, i, j])
    for b in Dim("B", parallel=True):
        for i in Dim("S", parallel=True):
            for j in Dim("T"):
                Z[b, i] += exp(X[b, i, j] - M[b, i])
    for b in Dim("B", parallel=True):
        for i in Dim("S", parallel=True):
            for j in Dim("T"):
                Y[b, i, j] = exp(X[b, i, j] - M[b, i]) / Z[b, i]
    return Y

@kernel
def attend(P: Tensor("B,S,T"), V: Tensor("B,T,D")) -> Tensor("B,S,D"):
    O = Tensor(B=P.shape[0], S=P.shape[1], D=V.shape[2], fill=0)
    for b in Dim("B", parallel=True):
        for i in Dim("S", parallel=True):
            for d in Dim("D", parallel=True):
                for j in Dim("T"):
                    O[b, i, d] += P[b, i, j] * V[b, j, d]
    return O

DIMS = {"B": 4, "S": 128, "D": 64}

def model(q: Tensor("B,S,D", role="input"), k: Tensor("B,S,D", role="input"),
          v: Tensor("B,S,D", role="input"), scale: float = 0.125):
    return attend(softmax(scores(q, k, scale)), v)
