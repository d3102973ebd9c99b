# out = (x + y) * scale in one fused element-wise kernel (scale = 0.5).
from solar.ir import kernel, Tensor, Dim

@kernel
def add_scale(X: Tensor("N"), Y: Tensor("N"), scale: float) -> Tensor("N"):
    Out = Tensor(N=X.shape[0])
    for i in Dim("N", parallel=True):
        Out[i] = (X[i] + Y[i]) * scale
    return Out

DIMS = {"N": 1048576}

def model(x: Tensor("N", role="input"), y: Tensor("N", role="input"), scale: float = 0.5):
    return add_scale(x, y, scale)
