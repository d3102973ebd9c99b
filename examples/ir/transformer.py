# A stack of pre-norm transformer blocks (RMSNorm, multi-head attention, SiLU MLP), with the
# layers unrolled by a `for l in range(...)` loop in model().
#
# Shows: stacked per-layer weights ("L,D,D": the model-level dim names only size the
# parameters; a kernel binds its own names positionally) and `select(w, dim="L", index=l)`, a
# view of one layer's slice (zero bytes; the kernel that reads it fetches only that slice);
# helper functions; the same kernels called once per layer (node names count the calls:
# linear#0 ... linear#11). The layer count comes from the weights' L dim, so `--dim L=4`
# analyses four layers.
from solar.ir import kernel, Tensor, Dim

@kernel
def rms_norm(X: Tensor("B,S,D"), G: Tensor("D"), n: int, eps: float) -> Tensor("B,S,D"):
    Sq = Tensor(B=X.shape[0], S=X.shape[1], D=X.shape[2])
    Ss = Tensor(B=X.shape[0], S=X.shape[1], fill=0)
    Rs = Tensor(B=X.shape[0], S=X.shape[1])
    Y = Tensor(B=X.shape[0], S=X.shape[1], D=X.shape[2])
    for b in Dim("B", parallel=True):
        for s in Dim("S", parallel=True):
            for d in Dim("D"):
                Sq[b, s, d] = X[b, s, d] * X[b, s, d]
    for b in Dim("B", parallel=True):
        for s in Dim("S", parallel=True):
            for d in Dim("D"):
                Ss[b, s] += Sq[b, s, d]
    for b in Dim("B", parallel=True):
        for s in Dim("S", parallel=True):
            Rs[b, s] = rsqrt(Ss[b, s] / n + eps)
    for b in Dim("B", parallel=True):
        for s in Dim("S", parallel=True):
            for d in Dim("D"):
                Y[b, s, d] = X[b, s, d] * Rs[b, s] * G[d]
    return Y

@kernel
def linear(X: Tensor("B,S,K"), W: Tensor("N,K")) -> Tensor("B,S,N"):
    Y = Tensor(B=X.shape[0], S=X.shape[1], N=W.shape[0], fill=0)
    for b in Dim("B", parallel=True):
        for s in Dim("S", parallel=True):
            for n in Dim("N", parallel=True):
                for k in Dim("K"):
                    Y[b, s, n] += X[b, s, k] * W[n, k]
    return Y

@kernel
def scores(Q: Tensor("B,H,S,E"), K: Tensor("B,H,T,E"), scale: float) -> Tensor("B,H,S,T"):
    A = Tensor(B=Q.shape[0], H=Q.shape[1], S=Q.shape[2], T=K.shape[2], fill=0)
    for b in Dim("B", parallel=True):
        for h in Dim("H", parallel=True):
            for i in Dim("S", parallel=True):
                for j in Dim("T", parallel=True):
                    for e in Dim("E"):
                        A[b, h, i, j] += Q[b, h, i, e] * K[b, h, j, e]
    for b in Dim("B", parallel=True):
        for h in Dim("H", parallel=True):
            for i in Dim("S", parallel=True):
                for j in Dim("T", parallel=True):
                    A[b, h, i, j] *= scale
    return A

@kernel
def softmax(X: Tensor("B,H,S,T")) -> Tensor("B,H,S,T"):
    M = Tensor(B=X.shape[0], H=X.shape[1], S=X.shape[2], fill=-inf)
    Z = Tensor(B=X.shape[0], H=X.shape[1], S=X.shape[2], fill=0)
    Y = Tensor(B=X.shape[0], H=X.shape[1], S=X.shape[2], T=X.shape[3])
    for b in Dim("B", parallel=True):
        for h in Dim("H", parallel=True):
            for i in Dim("S", parallel=True):
                for j in Dim("T"):
                    M[b, h, i] = max(M[b, h, i], X[b, h, i, j])
    for b in Dim("B", parallel=True):
        for h in Dim("H", parallel=True):
            for i in Dim("S", parallel=True):
                for j in Dim("T"):
                    Z[b, h, i] += exp(X[b, h, i, j] - M[b, h, i])
    for b in Dim("B", parallel=True):
        for h in Dim("H", parallel=True):
            for i in Dim("S", parallel=True):
                for j in Dim("T"):
                    Y[b, h, i, j] = exp(X[b, h, i, j] - M[b, h, i]) / Z[b, h, i]
    return Y

@kernel
def attend(P: Tensor("B,H,S,T"), V: Tensor("B,H,T,E")) -> Tensor("B,H,S,E"):
    O = Tensor(B=P.shape[0], H=P.shape[1], S=P.shape[2], E=V.shape[3], fill=0)
    for b in Dim("B", parallel=True):
        for h in Dim("H", parallel=True):
            for i in Dim("S", parallel=True):
                for e in Dim("E", parallel=True):
                    for j in Dim("T"):
                        O[b, h, i, e] += P[b, h, i, j] * V[b, h, j, e]
    return O

@kernel
def silu(X: Tensor("B,S,F")) -> Tensor("B,S,F"):
    Y = Tensor(B=X.shape[0], S=X.shape[1], F=X.shape[2])
    for b in Dim("B", parallel=True):
        for s in Dim("S", parallel=True):
            for f in Dim("F", parallel=True):
                Y[b, s, f] = X[b, s, f] * sigmoid(X[b, s, f])
    return Y

@kernel
def add(X: Tensor("B,S,D"), Y: Tensor("B,S,D")) -> Tensor("B,S,D"):
    Z = Tensor(B=X.shape[0], S=X.shape[1], D=X.shape[2])
    for b in Dim("B", parallel=True):
        for s in Dim("S", parallel=True):
            for d in Dim("D", parallel=True):
                Z[b, s, d] = X[b, s, d] + Y[b, s, d]
    return Z

def split_heads(t, heads):
    return permute(reshape(t, "B,S,H,E", H=heads, E=t.shape[2] // heads), "B,H,S,E")

def merge_heads(t):
    return reshape(permute(t, "B,S,H,E"), "B,S,D", D=t.shape[1] * t.shape[3])

def attention(x, wq, wk, wv, wo, heads, scale):
    q = split_heads(linear(x, wq), heads)
    k = split_heads(linear(x, wk), heads)
    v = split_heads(linear(x, wv), heads)
    o = attend(softmax(scores(q, k, scale)), v)
    return linear(merge_heads(o), wo)

def mlp(x, w_up, w_down):
    return linear(silu(linear(x, w_up)), w_down)

# L: layers; D: model width (attention width = heads · head size = D); F: MLP width.
DIMS = {"L": 2, "B": 2, "S": 128, "D": 256, "F": 1024}

def model(x: Tensor("B,S,D", role="input"),
          ln1: Tensor("L,D", role="weight"), wq: Tensor("L,D,D", role="weight"),
          wk: Tensor("L,D,D", role="weight"), wv: Tensor("L,D,D", role="weight"),
          wo: Tensor("L,D,D", role="weight"), ln2: Tensor("L,D", role="weight"),
          w_up: Tensor("L,F,D", role="weight"), w_down: Tensor("L,D,F", role="weight"),
          heads: int = 4, scale: float = 0.125, eps: float = 1e-6):
    d = x.shape[2]
    h = x
    for l in range(wq.shape[0]):
        a = rms_norm(h, select(ln1, dim="L", index=l), d, eps)
        h = add(h, attention(a, select(wq, dim="L", index=l), select(wk, dim="L", index=l),
                             select(wv, dim="L", index=l), select(wo, dim="L", index=l),
                             heads, scale))
        m = rms_norm(h, select(ln2, dim="L", index=l), d, eps)
        h = add(h, mlp(m, select(w_up, dim="L", index=l), select(w_down, dim="L", index=l)))
    return h
