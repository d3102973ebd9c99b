# Token embedding lookup plus learned position embeddings.
#
# Shows: the `gather` builtin (data-dependent indexing belongs to the composition layer, never
# to a kernel: `X[idx[i]]` in a kernel is a non-affine index). gather(table, index, dim="V")
# has the index's dims followed by the table's dims without V: [B, S] x [V, D] -> [B, S, D].
# Its traffic is the index, the rows it fetches (B·S rows of D values, at most the whole
# table) and its output; it has no FLOPs. The int64 token ids are a model input.
from solar.ir import kernel, Tensor, Dim

@kernel
def add_positions(X: Tensor("B,S,D"), P: Tensor("S,D")) -> Tensor("B,S,D"):
    Y = Tensor(B=X.shape[0], S=X.shape[1], D=X.shape[2])
    for b in Dim("B", parallel=True):
        for s in Dim("S", parallel=True):
            for d in Dim("D"):
                Y[b, s, d] = X[b, s, d] + P[s, d]
    return Y

DIMS = {"B": 8, "S": 128, "V": 32000, "D": 512}

def model(tokens: Tensor("B,S", dtype="int64", role="input"),
          table: Tensor("V,D", role="weight"), positions: Tensor("S,D", role="weight")):
    e = gather(table, tokens, dim="V")      # [B, S, D]
    return add_positions(e, positions)
