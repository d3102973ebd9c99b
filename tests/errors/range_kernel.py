# Kernel body: `for i in range(N)` on line 7 is a range loop in a kernel (use Dim("M")).
from solar.ir import kernel, Tensor, Dim

@kernel
def relu(X: Tensor("M,N"), N: int) -> Tensor("M,N"):
    Y = Tensor(M=X.shape[0], N=X.shape[1])
    for i in range(N):
        for j in Dim("N"):
            Y[i, j] = max(X[i, j], 0.0)
    return Y

DIMS = {"M": 4, "N": 8}

def model(x: Tensor("M,N", role="input")):
    return relu(x, 4)
