# relu(x @ w + b) with x [N, I], w [I, O] (input-major weight, as x @ w), b [O].
from solar.ir import kernel, Tensor, Dim

@kernel
def linear_bias_relu(X: Tensor("N,I"), W: Tensor("I,O"), Bias: Tensor("O")) -> Tensor("N,O"):
    Acc = Tensor(N=X.shape[0], O=W.shape[1])
    Y = Tensor(N=X.shape[0], O=W.shape[1])
    for n in Dim("N", parallel=True):
        for o in Dim("O", parallel=True):
            Acc[n, o] = Bias[o]
    for n in Dim("N", parallel=True):
        for o in Dim("O", parallel=True):
            for i in Dim("I"):
                Acc[n, o] += X[n, i] * W[i, o]
    for n in Dim("N", parallel=True):
        for o in Dim("O", parallel=True):
            Y[n, o] = max(Acc[n, o], 0.0)
    return Y

DIMS = {"N": 256, "I": 128, "O": 192}

def model(x: Tensor("N,I", role="input"), w: Tensor("I,O", role="input"),
          b: Tensor("O", role="input")):
    return linear_bias_relu(x, w, b)
