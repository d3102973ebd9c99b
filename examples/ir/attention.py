# Multi-head causal self-attention (QKV projections, scores, causal mask, softmax, AV, output
# projection).
#
# Shows: reshape and permute at model level to split and merge heads (reshape is a view,
# permute is a copy that reads and writes the whole tensor), a helper function, the causal
# mask inside a kernel as select(j <= i, s, -inf) (a comparison of loop variables: one
# compare per point), and a float scale passed from model() (1/sqrt(64) = 0.125).
from solar.ir import kernel, Tensor, Dim

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
def causal_scores(Q: Tensor("B,H,S,E"), K: Tensor("B,H,T,E"), scale: float) -> Tensor("B,H,S,T"):
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
                    A[b, h, i, j] = select(j <= i, A[b, h, i, j] * scale, -inf)
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

def split_heads(t, heads):
    # [B, S, N] -> [B, H, S, E]: a view, then a copy.
    return permute(reshape(t, "B,S,H,E", H=heads, E=t.shape[2] // heads), "B,H,S,E")

# D: model width; N: width of the attention projections (heads · head size), here equal to D
# (the two may differ; a square weight could also be written "D,D").
DIMS = {"B": 2, "S": 256, "D": 512, "N": 512}

def model(x: Tensor("B,S,D", role="input"), wq: Tensor("N,D", role="weight"),
          wk: Tensor("N,D", role="weight"), wv: Tensor("N,D", role="weight"),
          wo: Tensor("D,N", role="weight"), heads: int = 8, scale: float = 0.125):
    q = split_heads(linear(x, wq), heads)
    k = split_heads(linear(x, wk), heads)
    v = split_heads(linear(x, wv), heads)
    p = softmax(causal_scores(q, k, scale))
    o = attend(p, v)                                            # [B, H, S, E]
    o = reshape(permute(o, "B,S,H,E"), "B,S,N", N=o.shape[1] * o.shape[3])
    return linear(o, wo)
