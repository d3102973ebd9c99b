from solar.ir import kernel, Tensor, Dim


@kernel
def op(X: Tensor("R,C"), Y: Tensor("R,C")) -> Tensor("R,C"):
    Z = Tensor(R=X.shape[0], C=X.shape[1])
    for i in Dim("R", parallel=True):
        for j in Dim("C"):
            Z[i, j] = sqrt(X[i, j] * X[i, j] + Y[i, j] * Y[i, j])
    return Z


DIMS = {"R": 16, "C": 32}


def model(x0: Tensor("R,C", role="input"), x1: Tensor("R,C", role="input")):
    return op(x0, x1)
