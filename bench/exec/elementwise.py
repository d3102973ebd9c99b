# Executor benchmark: an element-wise chain over a 4096 x 4096 fp32 matrix,
#   y = tanh(x * a + b) * sigmoid(x) + c
# with a, b vectors over the last dim (D) and c a scalar (0.5).
# IR builtins (size, exp, inf, ...) are names the IR defines, not Python ones.
# ruff: noqa: F821, F841
from solar.ir import Dim, Tensor, kernel


@kernel
def chain(X: Tensor("T,D"), A: Tensor("D"), Bv: Tensor("D"), c: float) -> Tensor("T,D"):
    Y = Tensor(T=X.shape[0], D=X.shape[1])
    for t in Dim("T", parallel=True):
        for d in Dim("D", parallel=True):
            Y[t, d] = tanh(X[t, d] * A[d] + Bv[d]) * sigmoid(X[t, d]) + c
    return Y


DIMS = {"T": 4096, "D": 4096}


def model(
    x: Tensor("T,D", role="input"),
    a: Tensor("D", role="weight"),
    b: Tensor("D", role="weight"),
    c: float = 0.5,
):
    return chain(x, a, b, c)
