# Row sum, column mean and row argmax of one matrix.
#
# Shows: a reduction over the inner dim (row_sum) and over the OUTER dim (col_mean: the loop
# order does not decide which dims are reduced, the written index does); a mean as a sum
# followed by a 1-D divide nest; argmax as two statements in one innermost loop (the index is
# updated with select before the running maximum is), with an int64 result; a model() that
# returns three tensors.
from solar.ir import kernel, Tensor, Dim

@kernel
def row_sum(X: Tensor("R,C")) -> Tensor("R"):
    Y = Tensor(R=X.shape[0], fill=0)
    for i in Dim("R", parallel=True):
        for j in Dim("C"):
            Y[i] += X[i, j]
    return Y

@kernel
def col_mean(X: Tensor("R,C"), n: int) -> Tensor("C"):
    Y = Tensor(C=X.shape[1], fill=0)
    for i in Dim("R"):
        for j in Dim("C", parallel=True):
            Y[j] += X[i, j]
    for j in Dim("C", parallel=True):
        Y[j] = Y[j] / n
    return Y

@kernel
def argmax(X: Tensor("R,C")) -> Tensor("R", dtype="int64"):
    M = Tensor(R=X.shape[0], fill=-inf)
    I = Tensor(R=X.shape[0], dtype="int64", fill=0)
    for i in Dim("R", parallel=True):
        for j in Dim("C"):
            I[i] = select(X[i, j] > M[i], j, I[i])
            M[i] = max(M[i], X[i, j])
    return I

DIMS = {"R": 512, "C": 1024}

def model(x: Tensor("R,C", role="input")):
    s = row_sum(x)
    m = col_mean(x, x.shape[0])
    a = argmax(x)
    return s, m, a
