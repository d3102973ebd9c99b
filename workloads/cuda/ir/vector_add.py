# c = a + b over N elements.
from solar.ir import kernel, Tensor, Dim

@kernel
def vector_add(A: Tensor("N"), B: Tensor("N")) -> Tensor("N"):
    C = Tensor(N=A.shape[0])
    for i in Dim("N", parallel=True):
        C[i] = A[i] + B[i]
    return C

DIMS = {"N": 1048576}

def model(a: Tensor("N", role="input"), b: Tensor("N", role="input")):
    return vector_add(a, b)
