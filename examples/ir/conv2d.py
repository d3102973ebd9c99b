# Two 2-D convolutions with stride and zero padding, and a ReLU between them.
#
# Shows: static integer kernel parameters (`stride`, `pad`) used in affine indices, guards for
# the zero padding (the taps it excludes are not counted: docs/ir.md §7.1), an
# output size computed in the allocation, and the same kernel called twice with different
# scalar arguments (conv1: 3x3 stride 1 pad 1, "same"; conv2: 3x3 stride 2 pad 1, halves H, W).
# Node einsum of a convolution: NC(P+R)(Q+S),OCRS,O->NOPQ (sliding windows in parentheses).
from solar.ir import kernel, Tensor, Dim

@kernel
def conv2d(X: Tensor("N,C,H,W"), Wt: Tensor("O,C,R,S"), Bias: Tensor("O"),
           stride: int, pad: int) -> Tensor("N,O,P,Q"):
    Y = Tensor(N=X.shape[0], O=Wt.shape[0],
               P=(X.shape[2] + 2 * pad - Wt.shape[2]) // stride + 1,
               Q=(X.shape[3] + 2 * pad - Wt.shape[3]) // stride + 1)
    for n in Dim("N", parallel=True):
        for o in Dim("O", parallel=True):
            for p in Dim("P"):
                for q in Dim("Q"):
                    Y[n, o, p, q] = Bias[o]
    for n in Dim("N", parallel=True):
        for o in Dim("O", parallel=True):
            for p in Dim("P"):
                for q in Dim("Q"):
                    for c in Dim("C"):
                        for r in Dim("R"):
                            for s in Dim("S"):
                                if (0 <= p * stride + r - pad and p * stride + r - pad < size("H")
                                        and 0 <= q * stride + s - pad
                                        and q * stride + s - pad < size("W")):
                                    Y[n, o, p, q] += X[n, c, p * stride + r - pad, q * stride + s - pad] * Wt[o, c, r, s]
    return Y

@kernel
def relu(X: Tensor("N,C,H,W")) -> Tensor("N,C,H,W"):
    Y = Tensor(N=X.shape[0], C=X.shape[1], H=X.shape[2], W=X.shape[3])
    for n in Dim("N", parallel=True):
        for c in Dim("C", parallel=True):
            for h in Dim("H"):
                for w in Dim("W"):
                    Y[n, c, h, w] = max(X[n, c, h, w], 0.0)
    return Y

DIMS = {"N": 2, "C": 16, "H": 32, "W": 32, "O": 32, "F": 64, "R": 3, "S": 3}

def model(x: Tensor("N,C,H,W", role="input"),
          w1: Tensor("O,C,R,S", role="weight"), b1: Tensor("O", role="weight"),
          w2: Tensor("F,O,R,S", role="weight"), b2: Tensor("F", role="weight")):
    h = conv2d(x, w1, b1, 1, 1)        # [N, O, H, W]
    h = relu(h)
    return conv2d(h, w2, b2, 2, 1)     # [N, F, H/2, W/2]
