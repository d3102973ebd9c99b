# Budget: the loop on line 16 asks range() for 2,000,000 layers: model() loops are unrolled
# and one list holds at most 1,048,576 values (lower --dim L).
from solar.ir import kernel, Tensor, Dim

@kernel
def neg(X: Tensor("N")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for i in Dim("N"):
        Y[i] = -X[i]
    return Y

DIMS = {"N": 4, "L": 2000000}

def model(x: Tensor("N", role="input"), w: Tensor("L,N", role="weight", dtype="int8")):
    h = x
    for l in range(w.shape[0]):
        h = neg(h)
    return h
