# GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
from solar.ir import kernel, Tensor, Dim

SQRT_2_OVER_PI = 0.7978845608028654

@kernel
def gelu_tanh(X: Tensor("N,D")) -> Tensor("N,D"):
    Y = Tensor(N=X.shape[0], D=X.shape[1])
    for i in Dim("N", parallel=True):
        for j in Dim("D", parallel=True):
            Y[i, j] = 0.5 * X[i, j] * (1.0 + tanh(SQRT_2_OVER_PI * (X[i, j] + 0.044715 * X[i, j] * X[i, j] * X[i, j])))
    return Y

DIMS = {"N": 512, "D": 256}

def model(x: Tensor("N,D", role="input")):
    return gelu_tanh(x)
