# Two-layer perceptron relu(x @ w1 + b1) @ w2 + b2 (weights input-major, as x @ w).
from solar.ir import kernel, Tensor, Dim

@kernel
def linear(X: Tensor("N,I"), W: Tensor("I,O"), Bias: Tensor("O")) -> Tensor("N,O"):
    Y = Tensor(N=X.shape[0], O=W.shape[1])
    for n in Dim("N", parallel=True):
        for o in Dim("O", parallel=True):
            Y[n, o] = Bias[o]
    for n in Dim("N", parallel=True):
        for o in Dim("O", parallel=True):
            for i in Dim("I"):
                Y[n, o] += X[n, i] * W[i, o]
    return Y

@kernel
def relu(X: Tensor("N,D")) -> Tensor("N,D"):
    Y = Tensor(N=X.shape[0], D=X.shape[1])
    for n in Dim("N", parallel=True):
        for d in Dim("D", parallel=True):
            Y[n, d] = max(X[n, d], 0.0)
    return Y

DIMS = {"N": 256, "I": 128, "H": 256, "O": 64}

def model(x: Tensor("N,I", role="input"), w1: Tensor("I,H", role="input"),
          b1: Tensor("H", role="input"), w2: Tensor("H,O", role="input"),
          b2: Tensor("O", role="input")):
    h = relu(linear(x, w1, b1))
    return linear(h, w2, b2)
