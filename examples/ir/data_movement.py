# A tour of the data-movement builtins, with their traffic rules.
#
# concat, pad, stack, permute and cast copy (they read their inputs and write their output);
# slice, split, select and broadcast are views (zero bytes: a kernel that reads a view fetches
# at most the bytes of the tensor that owns the memory, so the broadcast [C] bias is read
# once, 256 bytes, not B·C·S times). `dim=` takes a dim name or an integer axis.
from solar.ir import kernel, Tensor, Dim

@kernel
def add_bias(X: Tensor("B,C,S"), Bias: Tensor("B,C,S")) -> Tensor("B,C,S"):
    Y = Tensor(B=X.shape[0], C=X.shape[1], S=X.shape[2])
    for b in Dim("B", parallel=True):
        for c in Dim("C", parallel=True):
            for s in Dim("S", parallel=True):
                Y[b, c, s] = X[b, c, s] + Bias[b, c, s]
    return Y

DIMS = {"B": 2, "C": 64, "S": 256}

def model(a: Tensor("B,C,S", role="input"), b: Tensor("B,C,S", role="input"),
          bias: Tensor("C", role="weight")):
    n, c, s = a.shape[0], a.shape[1], a.shape[2]
    x = concat([a, b], dim=1)                              # [B, 2C, S]      copy
    x = pad(x, dim="S", before=1, after=1, value=0)        # [B, 2C, S + 2]  copy
    x = slice(x, dim="S", start=2, stop=s + 2, step=1)     # [B, 2C, S]      view (shift by 1)
    lo, hi = split(x, dim="C", sizes=[c, c])               # 2 x [B, C, S]   views
    st = stack([lo, hi], dim="L")                          # [L=2, B, C, S]  copy
    st = permute(st, "B,L,C,S")                            # [B, 2, C, S]    copy
    first = select(st, dim="L", index=0)                   # [B, C, S]       view
    y = add_bias(first, broadcast(bias, "B,C,S", B=n, S=s))
    return cast(y, "bf16")                                 # [B, C, S] bf16  copy
