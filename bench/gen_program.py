"""Generates a transformer-style IR program with a given number of graph nodes.

Each layer is 22 nodes (RMS norms, QKV projections, reshapes/permutes, scores, causal
softmax, context, output projection, residual adds, GELU MLP).

  --style flat  model() is written out call by call with one weight parameter per layer
                (the shape a front end emits): parsing, checking and tracing all scale with
                the node count.
  --style loop  model() loops `for i in range(LAYERS)` over stacked weights [L, ...], taking
                each layer's slice with select() (8 more data-movement nodes per layer):
                the source stays small and tracing scales with the node count.

    python bench/gen_program.py --nodes 20000 --out /tmp/t20k.py [--style loop]
"""

from __future__ import annotations

import argparse

KERNELS = """
@kernel
def rms_norm(X: Tensor("S,D"), G: Tensor("D")) -> Tensor("S,D"):
    R = Tensor(S=X.shape[0])
    Y = Tensor(S=X.shape[0], D=X.shape[1])
    for s in Dim("S"):
        for d in Dim("D"):
            R[s] += X[s, d] * X[s, d]
    for s in Dim("S"):
        for d in Dim("D"):
            Y[s, d] = X[s, d] * rsqrt(R[s] / size("D") + 1e-06) * G[d]
    return Y


@kernel
def linear(X: Tensor("S,K"), W: Tensor("N,K")) -> Tensor("S,N"):
    Y = Tensor(S=X.shape[0], N=W.shape[0])
    for s in Dim("S"):
        for n in Dim("N"):
            for k in Dim("K"):
                Y[s, n] += X[s, k] * W[n, k]
    return Y


@kernel
def scores(Q: Tensor("H,S,E"), K: Tensor("H,T,E")) -> Tensor("H,S,T"):
    A = Tensor(H=Q.shape[0], S=Q.shape[1], T=K.shape[1])
    for h in Dim("H"):
        for s in Dim("S"):
            for t in Dim("T"):
                for e in Dim("E"):
                    A[h, s, t] += Q[h, s, e] * K[h, t, e]
    return A


@kernel
def causal_softmax(A: Tensor("H,S,T")) -> Tensor("H,S,T"):
    M = Tensor(H=A.shape[0], S=A.shape[1], fill=-inf)
    Z = Tensor(H=A.shape[0], S=A.shape[1])
    P = Tensor(H=A.shape[0], S=A.shape[1], T=A.shape[2])
    for h in Dim("H"):
        for s in Dim("S"):
            for t in Dim("T"):
                M[h, s] = max(M[h, s], select(t <= s, A[h, s, t], -inf))
    for h in Dim("H"):
        for s in Dim("S"):
            for t in Dim("T"):
                Z[h, s] += select(t <= s, exp(A[h, s, t] - M[h, s]), 0.0)
    for h in Dim("H"):
        for s in Dim("S"):
            for t in Dim("T"):
                P[h, s, t] = select(t <= s, exp(A[h, s, t] - M[h, s]), 0.0) / Z[h, s]
    return P


@kernel
def context(P: Tensor("H,S,T"), V: Tensor("H,T,E")) -> Tensor("H,S,E"):
    C = Tensor(H=P.shape[0], S=P.shape[1], E=V.shape[2])
    for h in Dim("H"):
        for s in Dim("S"):
            for e in Dim("E"):
                for t in Dim("T"):
                    C[h, s, e] += P[h, s, t] * V[h, t, e]
    return C


@kernel
def add(X: Tensor("S,D"), Y: Tensor("S,D")) -> Tensor("S,D"):
    Z = Tensor(S=X.shape[0], D=X.shape[1])
    for s in Dim("S"):
        for d in Dim("D"):
            Z[s, d] = X[s, d] + Y[s, d]
    return Z


@kernel
def gelu(X: Tensor("S,F")) -> Tensor("S,F"):
    Y = Tensor(S=X.shape[0], F=X.shape[1])
    for s in Dim("S"):
        for f in Dim("F"):
            Y[s, f] = 0.5 * X[s, f] * (1.0 + erf(X[s, f] * 0.7071067811865476))
    return Y
"""

LAYER = """    h = rms_norm(x, g1[{i}])
    q = reshape(linear(h, wq[{i}]), "S,H,E", H=HEADS)
    k = reshape(linear(h, wk[{i}]), "T,H,E", T=SEQ, H=HEADS)
    v = reshape(linear(h, wv[{i}]), "T,H,E", T=SEQ, H=HEADS)
    a = causal_softmax(scores(permute(q, "H,S,E"), permute(k, "H,T,E")))
    c = reshape(permute(context(a, permute(v, "H,T,E")), "S,H,E"), "S,D", D=DIM)
    x = add(x, linear(c, wo[{i}]))
    x = add(x, linear(gelu(linear(rms_norm(x, g2[{i}]), w1[{i}])), w2[{i}]))
"""
# Per-layer weights: name and dims.
WEIGHTS = (
    ("g1", "D"),
    ("wq", "D,D"),
    ("wk", "D,D"),
    ("wv", "D,D"),
    ("wo", "D,D"),
    ("g2", "D"),
    ("w1", "F,D"),
    ("w2", "D,F"),
)
LAYER_NODES = 22  # graph nodes per layer (kernel and builtin calls in LAYER)


def program(layers: int) -> str:
    out = ["HEADS = 8", "DIM = 512", "SEQ = 256", 'DIMS = {"S": 256, "D": 512, "F": 2048}', KERNELS]
    params = ['x: Tensor("S,D", role="input")']
    weights = (
        ("g1", "D"),
        ("wq", "D,D"),
        ("wk", "D,D"),
        ("wv", "D,D"),
        ("wo", "D,D"),
        ("g2", "D"),
        ("w1", "F,D"),
        ("w2", "D,F"),
    )
    for name, dims in weights:
        params += [f'{name}_{i}: Tensor("{dims}", role="weight")' for i in range(layers)]
    out.append("def model(" + ", ".join(params) + "):")
    for i in range(layers):
        out.append(LAYER.replace("[{i}]", f"_{i}").replace("{i}", str(i)))
    out.append("    return x\n")
    return "\n".join(out)


LOOP_NODES = LAYER_NODES + 8  # plus one select() per stacked weight


def loop_program(layers: int) -> str:
    out = [
        "HEADS = 8",
        "DIM = 512",
        "SEQ = 256",
        f"LAYERS = {layers}",
        f'DIMS = {{"S": 256, "D": 512, "F": 2048, "L": {layers}}}',
        KERNELS,
    ]
    params = ['x: Tensor("S,D", role="input")']
    weights = (
        ("g1", "D"),
        ("wq", "D,D"),
        ("wk", "D,D"),
        ("wv", "D,D"),
        ("wo", "D,D"),
        ("g2", "D"),
        ("w1", "F,D"),
        ("w2", "D,F"),
    )
    params += [f'{name}: Tensor("L,{dims}", role="weight")' for name, dims in weights]
    out.append("def model(" + ", ".join(params) + "):")
    out.append("    for i in range(LAYERS):")
    body = LAYER
    for name, _ in WEIGHTS:
        body = body.replace(f"{name}[{{i}}]", f'select({name}, dim="L", index=i)')
    out.append("\n".join("    " + line for line in body.splitlines()))
    out.append("    return x\n")
    return "\n".join(out)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--nodes", type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--style", choices=["flat", "loop"], default="flat")
    a = p.parse_args()
    per_layer = LAYER_NODES if a.style == "flat" else LOOP_NODES
    layers = max(1, round(a.nodes / per_layer))
    with open(a.out, "w") as f:
        f.write(program(layers) if a.style == "flat" else loop_program(layers))
    print(f"{a.out}: {layers} layers, {layers * per_layer} nodes ({a.style})")


if __name__ == "__main__":
    main()
