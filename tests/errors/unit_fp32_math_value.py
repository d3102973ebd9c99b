# Argument: fp32_math="fp4" in a unit header (line 16); it must be "fp32", "tf32", "bf16",
# "fp16" or "fp8".
from solar.ir import kernel, Tensor, Dim

@kernel
def relu(X: Tensor("M,N")) -> Tensor("M,N"):
    Y = Tensor(M=X.shape[0], N=X.shape[1])
    for i in Dim("M", parallel=True):
        for j in Dim("N"):
            Y[i, j] = max(X[i, j], 0.0)
    return Y

DIMS = {"M": 4, "N": 8}

def model(x: Tensor("M,N", role="input")):
    with unit("aten.relu", fp32_math="fp4"):
        y = relu(x)
    return y
