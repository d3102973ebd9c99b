# Type: concat on line 15 joins an fp16 and an fp32 tensor (no implicit promotion: cast first).
from solar.ir import kernel, Tensor, Dim

@kernel
def relu(X: Tensor("M,N")) -> Tensor("M,N"):
    Y = Tensor(M=X.shape[0], N=X.shape[1], dtype="fp16")
    for i in Dim("M", parallel=True):
        for j in Dim("N"):
            Y[i, j] = max(X[i, j], 0.0)
    return Y

DIMS = {"M": 4, "N": 8}

def model(x: Tensor("M,N", role="input", dtype="fp16"), y: Tensor("M,N", role="input")):
    z = concat([x, y], dim="N")
    return relu(z)
