# Max pooling (3x3, stride 2, padding 1, as in the ResNet stem) then 2x2 average pooling.
#
# Shows two ways to name the window dims of a pooling kernel:
# - max_pool2d: a sliding (overlapping) window. A kernel may loop only over dims named in a
#   parameter annotation or an allocation keyword, so the kernel allocates `Win`, a k x k
#   tensor that is never read or written, just to name the window dims R and S. A local
#   tensor that is not returned costs no DRAM traffic. Padding positions are skipped by a
#   guard (PyTorch pads max pooling with -inf, i.e. padded taps never win); the output is
#   allocated with fill=-inf and reduced with max.
# - avg_pool: a non-overlapping window (kernel = stride = 2). model() views the input as
#   [N, C, U, K, V, L] with a reshape (no copy, zero bytes): the window dims K and L are
#   ordinary tensor dims, the kernel sums over them and divides by the window area.
from solar.ir import kernel, Tensor, Dim

@kernel
def max_pool2d(X: Tensor("N,C,H,W"), k: int, stride: int, pad: int) -> Tensor("N,C,P,Q"):
    Win = Tensor(R=k, S=k)
    Y = Tensor(N=X.shape[0], C=X.shape[1],
               P=(X.shape[2] + 2 * pad - k) // stride + 1,
               Q=(X.shape[3] + 2 * pad - k) // stride + 1, fill=-inf)
    for n in Dim("N", parallel=True):
        for c in Dim("C", parallel=True):
            for p in Dim("P"):
                for q in Dim("Q"):
                    for r in Dim("R"):
                        for s in Dim("S"):
                            if (0 <= p * stride + r - pad and p * stride + r - pad < size("H")
                                    and 0 <= q * stride + s - pad
                                    and q * stride + s - pad < size("W")):
                                Y[n, c, p, q] = max(Y[n, c, p, q], X[n, c, p * stride + r - pad, q * stride + s - pad])
    return Y

@kernel
def avg_pool(X: Tensor("N,C,P,R,Q,S"), area: int) -> Tensor("N,C,P,Q"):
    Y = Tensor(N=X.shape[0], C=X.shape[1], P=X.shape[2], Q=X.shape[4])
    for n in Dim("N", parallel=True):
        for c in Dim("C", parallel=True):
            for p in Dim("P"):
                for q in Dim("Q"):
                    for r in Dim("R"):
                        for s in Dim("S"):
                            Y[n, c, p, q] += X[n, c, p, r, q, s]
    for n in Dim("N", parallel=True):
        for c in Dim("C", parallel=True):
            for p in Dim("P"):
                for q in Dim("Q"):
                    Y[n, c, p, q] = Y[n, c, p, q] / area
    return Y

DIMS = {"N": 2, "C": 64, "H": 112, "W": 112}

def model(x: Tensor("N,C,H,W", role="input")):
    m = max_pool2d(x, 3, 2, 1)                                       # [N, C, 56, 56]
    win = reshape(m, "N,C,U,K,V,L", U=m.shape[2] // 2, K=2, V=m.shape[3] // 2, L=2)
    return avg_pool(win, 2 * 2)                                      # [N, C, 28, 28]
