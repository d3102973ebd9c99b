# Multi-channel 1-D convolution, valid padding, stride 1: Y[b, o, p] = sum_c,k X[b, c, p + k] W[o, c, k].
from solar.ir import kernel, Tensor, Dim

@kernel
def conv1d(X: Tensor("B,C,L"), W: Tensor("O,C,K")) -> Tensor("B,O,P"):
    Y = Tensor(B=X.shape[0], O=W.shape[0], P=X.shape[2] - W.shape[2] + 1, fill=0)
    for b in Dim("B", parallel=True):
        for o in Dim("O", parallel=True):
            for p in Dim("P", parallel=True):
                for c in Dim("C"):
                    for k in Dim("K"):
                        Y[b, o, p] += X[b, c, p + k] * W[o, c, k]
    return Y

DIMS = {"B": 4, "C": 16, "O": 32, "L": 256, "K": 5}

def model(x: Tensor("B,C,L", role="input"), w: Tensor("O,C,K", role="input")):
    return conv1d(x, w)
