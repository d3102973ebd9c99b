# 2x2 average pooling, stride 2: a reshape view exposes the window dims, the kernel averages them.
from solar.ir import kernel, Tensor, Dim

@kernel
def avg_pool(X: Tensor("N,C,P,R,Q,S")) -> Tensor("N,C,P,Q"):
    Y = Tensor(N=X.shape[0], C=X.shape[1], P=X.shape[2], Q=X.shape[4], fill=0)
    for n in Dim("N", parallel=True):
        for c in Dim("C", parallel=True):
            for p in Dim("P", parallel=True):
                for q in Dim("Q", parallel=True):
                    for r in Dim("R"):
                        for s in Dim("S"):
                            Y[n, c, p, q] += X[n, c, p, r, q, s]
    for n in Dim("N", parallel=True):
        for c in Dim("C", parallel=True):
            for p in Dim("P", parallel=True):
                for q in Dim("Q", parallel=True):
                    Y[n, c, p, q] = Y[n, c, p, q] / (size("R") * size("S"))
    return Y

DIMS = {"N": 4, "C": 16, "H": 64, "W": 64}

def model(x: Tensor("N,C,H,W", role="input")):
    win = reshape(x, "N,C,P,R,Q,S", P=x.shape[2] // 2, R=2, Q=x.shape[3] // 2, S=2)
    return avg_pool(win)
