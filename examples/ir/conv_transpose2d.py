# Transposed 2-D convolution (kernel 4, stride 2, padding 1: doubles H and W), then sigmoid.
#
# Why the scatter form. The usual "gather" form of a transposed convolution reads
#     Y[n, o, p, q] += X[n, c, (p + pad - r) / stride, ...] * W[c, o, r, s]
# only where (p + pad - r) is divisible by stride. That needs `%` of loop variables, which is
# not affine, so the checker would reject it. Instead we iterate over the INPUT pixels and
# kernel taps and scatter into the output at the affine position h*stride + r - pad:
#     Y[n, o, h*stride + r - pad, w*stride + s - pad] += X[n, c, h, w] * Wt[c, o, r, s]
# Every index is affine, the guard drops the taps that fall into the cropped border, and the
# iteration space N·C·H·W·O·R·S is exactly the MAC count frameworks report for
# ConvTranspose2d. C is the only reduction dim (every other loop var indexes the output).
# (A stride-1 transposed convolution is also an ordinary convolution over a padded input with
# a flipped kernel; the scatter form covers every stride.)
from solar.ir import kernel, Tensor, Dim

@kernel
def conv_transpose2d(X: Tensor("N,C,H,W"), Wt: Tensor("C,O,R,S"), Bias: Tensor("O"),
                     stride: int, pad: int) -> Tensor("N,O,P,Q"):
    Y = Tensor(N=X.shape[0], O=Wt.shape[1],
               P=(X.shape[2] - 1) * stride - 2 * pad + Wt.shape[2],
               Q=(X.shape[3] - 1) * stride - 2 * pad + Wt.shape[3])
    for n in Dim("N", parallel=True):
        for o in Dim("O", parallel=True):
            for p in Dim("P"):
                for q in Dim("Q"):
                    Y[n, o, p, q] = Bias[o]
    for n in Dim("N", parallel=True):
        for c in Dim("C"):
            for h in Dim("H"):
                for w in Dim("W"):
                    for o in Dim("O"):
                        for r in Dim("R"):
                            for s in Dim("S"):
                                if (0 <= h * stride + r - pad and h * stride + r - pad < size("P")
                                        and 0 <= w * stride + s - pad
                                        and w * stride + s - pad < size("Q")):
                                    Y[n, o, h * stride + r - pad, w * stride + s - pad] += X[n, c, h, w] * Wt[c, o, r, s]
    return Y

@kernel
def sigmoid_act(X: Tensor("N,C,H,W")) -> Tensor("N,C,H,W"):
    Y = Tensor(N=X.shape[0], C=X.shape[1], H=X.shape[2], W=X.shape[3])
    for n in Dim("N", parallel=True):
        for c in Dim("C", parallel=True):
            for h in Dim("H"):
                for w in Dim("W"):
                    Y[n, c, h, w] = sigmoid(X[n, c, h, w])
    return Y

DIMS = {"N": 2, "C": 32, "H": 16, "W": 16, "O": 16, "R": 4, "S": 4}

def model(x: Tensor("N,C,H,W", role="input"), w: Tensor("C,O,R,S", role="weight"),
          b: Tensor("O", role="weight"), stride: int = 2, pad: int = 1):
    y = conv_transpose2d(x, w, b, stride, pad)     # [N, O, 2H, 2W]
    return sigmoid_act(y)
