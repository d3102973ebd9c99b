# Type error: line 15 passes the tensor x as the static int parameter `stride`.
from solar.ir import kernel, Tensor, Dim

@kernel
def sub(X: Tensor("M,N"), stride: int) -> Tensor("M,N"):
    Y = Tensor(M=X.shape[0], N=X.shape[1])
    for i in Dim("M", parallel=True):
        for j in Dim("N"):
            Y[i, j] = X[i, j] * stride
    return Y

DIMS = {"M": 4, "N": 8}

def model(x: Tensor("M,N", role="input")):
    return sub(x, stride=x)
