# One pre-norm transformer block (RMSNorm, multi-head attention, SwiGLU MLP), every size a DIMS
# entry so that sweeps (`solar sweep`, the paper's Figure 5) can vary any of them:
# B batch, S sequence, D model width, H heads, E head size, F MLP width.
#
# Per-head projections are stored per head ("H,E,D"), so H * E need not equal D (Qwen3-4B:
# D=2560, H=32, E=128, F=9728; DIMS below are small defaults). Keys and values have as many
# heads as queries (no grouped-query attention), and there is no mask or rotary embedding.
from solar.ir import kernel, Tensor, Dim

@kernel
def rms_norm(X: Tensor("B,S,D"), G: Tensor("D"), n: int, eps: float) -> Tensor("B,S,D"):
    Ss = Tensor(B=X.shape[0], S=X.shape[1], fill=0)
    Rs = Tensor(B=X.shape[0], S=X.shape[1])
    Y = Tensor(B=X.shape[0], S=X.shape[1], D=X.shape[2])
    for b in Dim("B", parallel=True):
        for s in Dim("S", parallel=True):
            for d in Dim("D"):
                Ss[b, s] += X[b, s, d] * X[b, s, d]
    for b in Dim("B", parallel=True):
        for s in Dim("S", parallel=True):
            Rs[b, s] = rsqrt(Ss[b, s] / n + eps)
    for b in Dim("B", parallel=True):
        for s in Dim("S", parallel=True):
            for d in Dim("D"):
                Y[b, s, d] = X[b, s, d] * Rs[b, s] * G[d]
    return Y

@kernel
def project_heads(X: Tensor("B,S,D"), W: Tensor("H,E,D")) -> Tensor("B,H,S,E"):
    Y = Tensor(B=X.shape[0], H=W.shape[0], S=X.shape[1], E=W.shape[1], fill=0)
    for b in Dim("B", parallel=True):
        for h in Dim("H", parallel=True):
            for s in Dim("S", parallel=True):
                for e in Dim("E", parallel=True):
                    for d in Dim("D"):
                        Y[b, h, s, e] += X[b, s, d] * W[h, e, d]
    return Y

@kernel
def scores(Q: Tensor("B,H,S,E"), K: Tensor("B,H,T,E")) -> Tensor("B,H,S,T"):
    A = Tensor(B=Q.shape[0], H=Q.shape[1], S=Q.shape[2], T=K.shape[2], fill=0)
    for b in Dim("B", parallel=True):
        for h in Dim("H", parallel=True):
            for i in Dim("S", parallel=True):
                for j in Dim("T", parallel=True):
                    for e in Dim("E"):
                        A[b, h, i, j] += Q[b, h, i, e] * K[b, h, j, e]
    return A

@kernel
def softmax(X: Tensor("B,H,S,T"), scale: float) -> Tensor("B,H,S,T"):
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
                    Z[b, h, i] += exp(scale * (X[b, h, i, j] - M[b, h, i]))
    for b in Dim("B", parallel=True):
        for h in Dim("H", parallel=True):
            for i in Dim("S", parallel=True):
                for j in Dim("T"):
                    Y[b, h, i, j] = exp(scale * (X[b, h, i, j] - M[b, h, i])) / Z[b, h, i]
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
def merge_heads(O: Tensor("B,H,S,E"), W: Tensor("D,H,E")) -> Tensor("B,S,D"):
    Y = Tensor(B=O.shape[0], S=O.shape[2], D=W.shape[0], fill=0)
    for b in Dim("B", parallel=True):
        for s in Dim("S", parallel=True):
            for d in Dim("D", parallel=True):
                for h in Dim("H"):
                    for e in Dim("E"):
                        Y[b, s, d] += O[b, h, s, e] * W[d, h, e]
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
def swiglu(G: Tensor("B,S,F"), U: Tensor("B,S,F")) -> Tensor("B,S,F"):
    Y = Tensor(B=G.shape[0], S=G.shape[1], F=G.shape[2])
    for b in Dim("B", parallel=True):
        for s in Dim("S", parallel=True):
            for f in Dim("F", parallel=True):
                Y[b, s, f] = G[b, s, f] * sigmoid(G[b, s, f]) * U[b, s, f]
    return Y

@kernel
def add(X: Tensor("B,S,D"), Y: Tensor("B,S,D")) -> Tensor("B,S,D"):
    Z = Tensor(B=X.shape[0], S=X.shape[1], D=X.shape[2])
    for b in Dim("B", parallel=True):
        for s in Dim("S", parallel=True):
            for d in Dim("D", parallel=True):
                Z[b, s, d] = X[b, s, d] + Y[b, s, d]
    return Z

DIMS = {"B": 1, "S": 512, "D": 1024, "H": 8, "E": 128, "F": 4096}

def model(x: Tensor("B,S,D", role="input"), ln1: Tensor("D", role="weight"),
          wq: Tensor("H,E,D", role="weight"), wk: Tensor("H,E,D", role="weight"),
          wv: Tensor("H,E,D", role="weight"), wo: Tensor("D,H,E", role="weight"),
          ln2: Tensor("D", role="weight"), w_gate: Tensor("F,D", role="weight"),
          w_up: Tensor("F,D", role="weight"), w_down: Tensor("D,F", role="weight"),
          eps: float = 1e-6):
    d = x.shape[2]
    scale = 1.0 / (wq.shape[1] ** 0.5)
    a = rms_norm(x, ln1, d, eps)
    q = project_heads(a, wq)
    k = project_heads(a, wk)
    v = project_heads(a, wv)
    h = add(x, merge_heads(attend(softmax(scores(q, k), scale), v), wo))
    m = rms_norm(h, ln2, d, eps)
    return add(h, linear(swiglu(linear(m, w_gate), linear(m, w_up)), w_down))
