# Row-wise cosine similarity: dot(a, b) / max(|a| |b|, eps).
from solar.ir import kernel, Tensor, Dim

@kernel
def cosine_similarity(A: Tensor("N,D"), B: Tensor("N,D"), eps: float) -> Tensor("N"):
    Dot = Tensor(N=A.shape[0], fill=0)
    Na = Tensor(N=A.shape[0], fill=0)
    Nb = Tensor(N=A.shape[0], fill=0)
    Y = Tensor(N=A.shape[0])
    for i in Dim("N", parallel=True):
        for d in Dim("D"):
            Dot[i] += A[i, d] * B[i, d]
            Na[i] += A[i, d] * A[i, d]
            Nb[i] += B[i, d] * B[i, d]
    for i in Dim("N", parallel=True):
        Y[i] = Dot[i] / max(sqrt(Na[i]) * sqrt(Nb[i]), eps)
    return Y

DIMS = {"N": 512, "D": 256}

def model(a: Tensor("N,D", role="input"), b: Tensor("N,D", role="input"),
          eps: float = 1e-8):
    return cosine_similarity(a, b, eps)
