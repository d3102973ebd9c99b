# Depthwise 3x3 convolution followed by a grouped 3x3 convolution (groups = 4).
#
# Shows: a depthwise convolution (the channel dim C indexes input, weight and output: no
# reduction over channels, only over the window R, S); a grouped convolution whose input
# channel index is the affine expression g*size("D") + d (group g, channel d inside the
# group); and reshape views at model level: the [K, D, R, S] weight is viewed as
# [G, O, D, R, S] and the [N, G, O, P, Q] result as [N, K, P, Q]. Views move no bytes.
from solar.ir import kernel, Tensor, Dim

@kernel
def depthwise_conv2d(X: Tensor("N,C,H,W"), Wt: Tensor("C,R,S"), stride: int,
                     pad: int) -> Tensor("N,C,P,Q"):
    Y = Tensor(N=X.shape[0], C=X.shape[1],
               P=(X.shape[2] + 2 * pad - Wt.shape[1]) // stride + 1,
               Q=(X.shape[3] + 2 * pad - Wt.shape[2]) // stride + 1)
    for n in Dim("N", parallel=True):
        for c in Dim("C", parallel=True):
            for p in Dim("P"):
                for q in Dim("Q"):
                    for r in Dim("R"):
                        for s in Dim("S"):
                            if (0 <= p * stride + r - pad and p * stride + r - pad < size("H")
                                    and 0 <= q * stride + s - pad
                                    and q * stride + s - pad < size("W")):
                                Y[n, c, p, q] += X[n, c, p * stride + r - pad, q * stride + s - pad] * Wt[c, r, s]
    return Y

@kernel
def grouped_conv2d(X: Tensor("N,C,H,W"), Wt: Tensor("G,O,D,R,S"), stride: int,
                   pad: int) -> Tensor("N,G,O,P,Q"):
    Y = Tensor(N=X.shape[0], G=Wt.shape[0], O=Wt.shape[1],
               P=(X.shape[2] + 2 * pad - Wt.shape[3]) // stride + 1,
               Q=(X.shape[3] + 2 * pad - Wt.shape[4]) // stride + 1)
    for n in Dim("N", parallel=True):
        for g in Dim("G", parallel=True):
            for o in Dim("O", parallel=True):
                for p in Dim("P"):
                    for q in Dim("Q"):
                        for d in Dim("D"):
                            for r in Dim("R"):
                                for s in Dim("S"):
                                    if (0 <= p * stride + r - pad
                                            and p * stride + r - pad < size("H")
                                            and 0 <= q * stride + s - pad
                                            and q * stride + s - pad < size("W")):
                                        Y[n, g, o, p, q] += X[n, g * size("D") + d, p * stride + r - pad, q * stride + s - pad] * Wt[g, o, d, r, s]
    return Y

# D (input channels per group) must equal C / groups; K (output channels) must be a multiple
# of groups.
DIMS = {"N": 2, "C": 32, "H": 16, "W": 16, "R": 3, "S": 3, "K": 64, "D": 8}

def model(x: Tensor("N,C,H,W", role="input"), w_dw: Tensor("C,R,S", role="weight"),
          w_g: Tensor("K,D,R,S", role="weight"), groups: int = 4):
    h = depthwise_conv2d(x, w_dw, 1, 1)                              # [N, C, H, W]
    wg = reshape(w_g, "G,O,D,R,S", G=groups, O=w_g.shape[0] // groups)
    y = grouped_conv2d(h, wg, 1, 1)                                  # [N, G, O, H, W]
    return reshape(y, "N,K,P,Q", K=y.shape[1] * y.shape[2])
