# Executor benchmark: max pooling 3x3, stride 2, padding 1 (the ResNet stem) on
# 8 x 64 x 112 x 112 fp32. Padded taps never win (output filled with -inf, guard skips them),
# as torch.nn.functional.max_pool2d(x, 3, 2, 1).
# IR builtins (size, exp, inf, ...) are names the IR defines, not Python ones.
# ruff: noqa: F821, F841
from solar.ir import Dim, Tensor, kernel


@kernel
def max_pool2d(X: Tensor("N,C,H,W"), k: int, stride: int, pad: int) -> Tensor("N,C,P,Q"):
    Win = Tensor(R=k, S=k)
    Y = Tensor(
        N=X.shape[0],
        C=X.shape[1],
        P=(X.shape[2] + 2 * pad - k) // stride + 1,
        Q=(X.shape[3] + 2 * pad - k) // stride + 1,
        fill=-inf,
    )
    for n in Dim("N", parallel=True):
        for c in Dim("C", parallel=True):
            for p in Dim("P", parallel=True):
                for q in Dim("Q", parallel=True):
                    for r in Dim("R"):
                        for s in Dim("S"):
                            if (
                                0 <= p * stride + r - pad
                                and p * stride + r - pad < size("H")
                                and 0 <= q * stride + s - pad
                                and q * stride + s - pad < size("W")
                            ):
                                Y[n, c, p, q] = max(
                                    Y[n, c, p, q],
                                    X[n, c, p * stride + r - pad, q * stride + s - pad],
                                )
    return Y


DIMS = {"N": 8, "C": 64, "H": 112, "W": 112}


def model(x: Tensor("N,C,H,W", role="input")):
    return max_pool2d(x, 3, 2, 1)
