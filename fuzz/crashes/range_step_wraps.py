# range() with a step that wraps past 2^63 - 1: i += step was signed overflow, and never
# reached the stop. Now one item.
@kernel
def neg(X: Tensor("N")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for i in Dim("N"):
        Y[i] = -X[i]
    return Y

DIMS = {"N": 4}

def model(x: Tensor("N", role="input")):
    for i in range(9223372036854775806, 9223372036854775807, 4611686018427387904):
        x = neg(x)
    return x
