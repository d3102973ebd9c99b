# clip(a * b + c, -1, 1), one fused element-wise kernel.
from solar.ir import kernel, Tensor, Dim

@kernel
def fma_clip(A: Tensor("N,D"), B: Tensor("N,D"), C: Tensor("N,D"), lo: float,
             hi: float) -> Tensor("N,D"):
    Y = Tensor(N=A.shape[0], D=A.shape[1])
    for i in Dim("N", parallel=True):
        for j in Dim("D", parallel=True):
            Y[i, j] = min(max(A[i, j] * B[i, j] + C[i, j], lo), hi)
    return Y

DIMS = {"N": 512, "D": 256}

def model(a: Tensor("N,D", role="input"), b: Tensor("N,D", role="input"),
          c: Tensor("N,D", role="input")):
    return fma_clip(a, b, c, -1.0, 1.0)
