# X[i * 2^62] with i < 3: signed overflow (UBSan) in the cache-aware extents before the lifting
# refused indices whose values can exceed int64.
@kernel
def f(X: Tensor("N")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for i in Dim("N"):
        Y[i] = X[i * 4611686018427387904]
    return Y
DIMS = {"N": 3}
def model(x: Tensor("N", role="input")):
    return f(x)
