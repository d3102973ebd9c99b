# Executor benchmark: 2-D convolution 3x3, stride 1, zero padding 1, 64 -> 64 channels,
# 56x56, batch 8, fp32, no bias (torch: F.conv2d(x, w, padding=1)). Guards skip the padding.
# IR builtins (size, exp, inf, ...) are names the IR defines, not Python ones.
# ruff: noqa: F821, F841
from solar.ir import Dim, Tensor, kernel


@kernel
def conv2d(X: Tensor("N,C,H,W"), Wt: Tensor("O,C,R,S"), stride: int, pad: int) -> Tensor("N,O,P,Q"):
    Y = Tensor(
        N=X.shape[0],
        O=Wt.shape[0],
        P=(X.shape[2] + 2 * pad - Wt.shape[2]) // stride + 1,
        Q=(X.shape[3] + 2 * pad - Wt.shape[3]) // stride + 1,
    )
    for n in Dim("N", parallel=True):
        for o in Dim("O", parallel=True):
            for p in Dim("P", parallel=True):
                for q in Dim("Q", parallel=True):
                    for c in Dim("C"):
                        for r in Dim("R"):
                            for s in Dim("S"):
                                if (
                                    0 <= p * stride + r - pad
                                    and p * stride + r - pad < size("H")
                                    and 0 <= q * stride + s - pad
                                    and q * stride + s - pad < size("W")
                                ):
                                    Y[n, o, p, q] += (
                                        X[n, c, p * stride + r - pad, q * stride + s - pad]
                                        * Wt[o, c, r, s]
                                    )
    return Y


DIMS = {"N": 8, "C": 64, "H": 56, "W": 56, "O": 64, "R": 3, "S": 3}


def model(x: Tensor("N,C,H,W", role="input"), w: Tensor("O,C,R,S", role="weight")):
    return conv2d(x, w, 1, 1)
