from solar.ir import kernel, Tensor, Dim


@kernel
def softmax(X: Tensor("R,C")) -> Tensor("R,C"):
    M = Tensor(R=X.shape[0], fill=-inf)
    S = Tensor(R=X.shape[0], fill=0)
    Y = Tensor(R=X.shape[0], C=X.shape[1])
    for i in Dim("R", parallel=True):
        for j in Dim("C"):
            M[i] = max(M[i], X[i, j])
    for i in Dim("R", parallel=True):
        for j in Dim("C"):
            S[i] += exp(X[i, j] - M[i])
    for i in Dim("R", parallel=True):
        for j in Dim("C"):
            Y[i, j] = exp(X[i, j] - M[i]) / S[i]
    return Y


DIMS = {"R": 64, "C": 128}


def model(x: Tensor("R,C", role="input")):
    return softmax(x)
