# Inclusive prefix sums along the last dim, forward and reversed.
#
# Shows: a sequential scan (iteration j reads what iteration j-1 wrote, so the C loop is NOT
# parallel) written with an affine guard `if j == 0:` / `else:`; a reversed scan with the
# affine index size("C") - 1 - j. Each branch counts the points its guard lets through: the
# `else` branch's add at j > 0 (the first column's copy costs nothing).
from solar.ir import kernel, Tensor, Dim

@kernel
def cumsum(X: Tensor("R,C")) -> Tensor("R,C"):
    Y = Tensor(R=X.shape[0], C=X.shape[1])
    for i in Dim("R", parallel=True):
        for j in Dim("C"):
            if j == 0:
                Y[i, j] = X[i, j]
            else:
                Y[i, j] = Y[i, j - 1] + X[i, j]
    return Y

@kernel
def reverse_cumsum(X: Tensor("R,C")) -> Tensor("R,C"):
    Y = Tensor(R=X.shape[0], C=X.shape[1])
    for i in Dim("R", parallel=True):
        for j in Dim("C"):
            if j == 0:
                Y[i, size("C") - 1 - j] = X[i, size("C") - 1 - j]
            else:
                Y[i, size("C") - 1 - j] = Y[i, size("C") - j] + X[i, size("C") - 1 - j]
    return Y

DIMS = {"R": 128, "C": 4096}

def model(x: Tensor("R,C", role="input")):
    return cumsum(x), reverse_cumsum(x)
