# Mean squared error: a reduction over every element into a one-element tensor, viewed as 0-d.
from solar.ir import kernel, Tensor, Dim

@kernel
def mse(P: Tensor("N,D"), T: Tensor("N,D")) -> Tensor("O"):
    L = Tensor(O=1, fill=0)
    for o in Dim("O"):
        for i in Dim("N"):
            for j in Dim("D"):
                L[o] += (P[i, j] - T[i, j]) * (P[i, j] - T[i, j])
    for o in Dim("O"):
        L[o] = L[o] / (size("N") * size("D"))
    return L

DIMS = {"N": 512, "D": 256}

def model(pred: Tensor("N,D", role="input"), target: Tensor("N,D", role="input")):
    return reshape(mse(pred, target), "")
