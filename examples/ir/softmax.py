# Row softmax with a temperature, in the numerically stable three-pass form.
#
# Shows: a max-reduction into a tensor allocated with fill=-inf, an exp-sum reduction, an
# element-wise divide, kernel-local tensors (M, S) that are not returned and therefore cost no
# DRAM traffic, and a float scalar parameter passed from model().
# Non-MAC FLOPs per element: scale 1 mul; softmax 1 compare + (1 add + 1 sub + 1 exp)
# + (1 sub + 1 exp + 1 div) = 7.
from solar.ir import kernel, Tensor, Dim

@kernel
def scale(X: Tensor("R,C"), factor: float) -> Tensor("R,C"):
    Y = Tensor(R=X.shape[0], C=X.shape[1])
    for i in Dim("R", parallel=True):
        for j in Dim("C"):
            Y[i, j] = X[i, j] * factor
    return Y

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

DIMS = {"R": 512, "C": 1024}

def model(x: Tensor("R,C", role="input"), inv_temperature: float = 0.5):
    return softmax(scale(x, inv_temperature))
