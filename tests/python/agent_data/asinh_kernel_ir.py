from solar.ir import kernel, Tensor, Dim

@kernel
def op(X: Tensor("R,C")) -> Tensor("R,C"):
    Y = Tensor(R=X.shape[0], C=X.shape[1])
    for i in Dim("R", parallel=True):
        for j in Dim("C"):
            Y[i, j] = select(X[i, j] < 0, -log(-X[i, j] + sqrt(X[i, j] * X[i, j] + 1)), log(X[i, j] + sqrt(X[i, j] * X[i, j] + 1)))
    return Y

DIMS = {"R": 16, "C": 32}

def model(x0: Tensor("R,C", role="input")):
    return op(x0)
