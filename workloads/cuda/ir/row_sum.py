# out[r] = sum over c of x[r, c].
from solar.ir import kernel, Tensor, Dim

@kernel
def row_sum(X: Tensor("R,C")) -> Tensor("R"):
    Y = Tensor(R=X.shape[0], fill=0)
    for r in Dim("R", parallel=True):
        for c in Dim("C"):
            Y[r] += X[r, c]
    return Y

DIMS = {"R": 128, "C": 8192}

def model(x: Tensor("R,C", role="input")):
    return row_sum(x)
