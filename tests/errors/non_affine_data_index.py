# Data-dependent index: `X[idx[i], j]` on line 9 indexes with a tensor value (use gather).
from solar.ir import kernel, Tensor, Dim

@kernel
def lookup(X: Tensor("V,D"), idx: Tensor("T", dtype="int64")) -> Tensor("T,D"):
    Y = Tensor(T=idx.shape[0], D=X.shape[1])
    for i in Dim("T", parallel=True):
        for j in Dim("D"):
            Y[i, j] = X[idx[i], j]
    return Y

DIMS = {"V": 16, "D": 8, "T": 4}

def model(table: Tensor("V,D", role="weight"), ids: Tensor("T", role="input", dtype="int64")):
    return lookup(table, ids)
