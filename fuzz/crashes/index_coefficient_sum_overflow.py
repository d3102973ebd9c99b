# Three terms i * 2^62 of one index: their coefficients summed with signed overflow (UBSan).
@kernel
def f(X: Tensor("N")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for i in Dim("N"):
        Y[i] = X[i * 4611686018427387904 + i * 4611686018427387904 + i * 4611686018427387904]
    return Y
DIMS = {"N": 3}
def model(x: Tensor("N", role="input")):
    return f(x)
