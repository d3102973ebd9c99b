# out[c, r] = in[r, c]: a copy kernel that reads and writes the whole matrix once.
from solar.ir import kernel, Tensor, Dim

@kernel
def transpose(X: Tensor("R,C")) -> Tensor("C,R"):
    Y = Tensor(C=X.shape[1], R=X.shape[0])
    for r in Dim("R", parallel=True):
        for c in Dim("C", parallel=True):
            Y[c, r] = X[r, c]
    return Y

DIMS = {"R": 1024, "C": 2048}

def model(x: Tensor("R,C", role="input")):
    return transpose(x)
