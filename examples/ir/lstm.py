# A single-layer LSTM unrolled over T time steps (PyTorch gate order i, f, g, o).
#
# Shows: a recurrence in model() (`for t in range(...)` is unrolled by the tracer: one
# lstm_gates node and one lstm_cell node per step), `select(x, dim="T", index=t)` to take one
# time step (a view: zero bytes; each step's kernel fetches only its [B, I] slice), `split`
# of the [B, 4H] gate pre-activations into four [B, H] views, a kernel with two MAC nests
# (input and recurrent projections) after a bias-initialisation nest, and a kernel that
# returns a tuple (h, c).
from solar.ir import kernel, Tensor, Dim

@kernel
def lstm_gates(X: Tensor("B,I"), Hp: Tensor("B,H"), Wi: Tensor("G,I"), Wh: Tensor("G,H"),
               Bias: Tensor("G")) -> Tensor("B,G"):
    Z = Tensor(B=X.shape[0], G=Wi.shape[0])
    for b in Dim("B", parallel=True):
        for g in Dim("G", parallel=True):
            Z[b, g] = Bias[g]
    for b in Dim("B", parallel=True):
        for g in Dim("G", parallel=True):
            for i in Dim("I"):
                Z[b, g] += X[b, i] * Wi[g, i]
    for b in Dim("B", parallel=True):
        for g in Dim("G", parallel=True):
            for k in Dim("H"):
                Z[b, g] += Hp[b, k] * Wh[g, k]
    return Z

@kernel
def lstm_cell(Ig: Tensor("B,H"), Fg: Tensor("B,H"), Gg: Tensor("B,H"), Og: Tensor("B,H"),
              C: Tensor("B,H")) -> (Tensor("B,H"), Tensor("B,H")):
    Cn = Tensor(B=C.shape[0], H=C.shape[1])
    Hn = Tensor(B=C.shape[0], H=C.shape[1])
    for b in Dim("B", parallel=True):
        for j in Dim("H", parallel=True):
            Cn[b, j] = sigmoid(Fg[b, j]) * C[b, j] + sigmoid(Ig[b, j]) * tanh(Gg[b, j])
    for b in Dim("B", parallel=True):
        for j in Dim("H", parallel=True):
            Hn[b, j] = sigmoid(Og[b, j]) * tanh(Cn[b, j])
    return Hn, Cn

# G (gate rows) must be 4·H.
DIMS = {"T": 16, "B": 4, "I": 256, "H": 512, "G": 2048}

def model(x: Tensor("T,B,I", role="input"), h0: Tensor("B,H", role="input"),
          c0: Tensor("B,H", role="input"), w_ih: Tensor("G,I", role="weight"),
          w_hh: Tensor("G,H", role="weight"), bias: Tensor("G", role="weight")):
    hidden = h0.shape[1]
    h, c = h0, c0
    for t in range(x.shape[0]):
        z = lstm_gates(select(x, dim="T", index=t), h, w_ih, w_hh, bias)
        i, f, g, o = split(z, dim="G", sizes=[hidden, hidden, hidden, hidden])
        h, c = lstm_cell(i, f, g, o, c)
    return h, c
