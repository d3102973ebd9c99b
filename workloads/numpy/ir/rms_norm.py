# RMS normalisation over the last dim with a learned scale.
from solar.ir import kernel, Tensor, Dim

@kernel
def rms_norm(X: Tensor("N,D"), G: Tensor("D"), eps: float) -> Tensor("N,D"):
    Ss = Tensor(N=X.shape[0], fill=0)
    Rs = Tensor(N=X.shape[0])
    Y = Tensor(N=X.shape[0], D=X.shape[1])
    for i in Dim("N", parallel=True):
        for d in Dim("D"):
            Ss[i] += X[i, d] * X[i, d]
    for i in Dim("N", parallel=True):
        Rs[i] = rsqrt(Ss[i] / size("D") + eps)
    for i in Dim("N", parallel=True):
        for d in Dim("D"):
            Y[i, d] = X[i, d] * Rs[i] * G[d]
    return Y

DIMS = {"N": 512, "D": 256}

def model(x: Tensor("N,D", role="input"), weight: Tensor("D", role="input"),
          eps: float = 1e-6):
    return rms_norm(x, weight, eps)
