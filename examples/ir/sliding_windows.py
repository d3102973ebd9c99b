# Audio-style framing: overlapping windows of a signal (the `unfold` view builtin, as
# torch.Tensor.unfold), each multiplied by a window function.
#
# unfold(x, dim="L", size=K, step=s) is a view: dim L becomes the window count
# (L - K) / s + 1 and a new last dim W runs over the K samples of a window. Overlapping windows
# share x's elements, so a kernel reading the windows fetches at most x's bytes, and the
# windows returned as they are cost nothing (they alias the input, as in PyTorch).
from solar.ir import kernel, Tensor, Dim

@kernel
def apply_window(X: Tensor("B,L,W"), Win: Tensor("W")) -> Tensor("B,L,W"):
    Y = Tensor(B=X.shape[0], L=X.shape[1], W=X.shape[2])
    for b in Dim("B", parallel=True):
        for p in Dim("L", parallel=True):
            for w in Dim("W", parallel=True):
                Y[b, p, w] = X[b, p, w] * Win[w]
    return Y

DIMS = {"B": 4, "L": 16384, "W": 512}

def model(x: Tensor("B,L", role="input"), win: Tensor("W", role="weight"), hop: int = 128):
    frames = unfold(x, dim="L", size=win.shape[0], step=hop)   # [B, 125, 512]  view
    return apply_window(frames, win), frames
