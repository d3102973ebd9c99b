# Upsampling of the PyTorch front end over [A, H, W] / [A, D, H, W] (batch and channels folded
# into A by a view). An integer scale factor is affine in scatter form: input pixel h writes
# output rows h*f .. h*f + f - 1. Any other scale reads data-chosen source rows: their row
# numbers are computed by a small kernel and fetched with `gather`, one dim at a time.
from solar.ir import kernel, Tensor, Dim


@kernel
def upsample_nearest2d_int(X: Tensor("A,H,W"), fh: int, fw: int) -> Tensor("A,P,Q", dtype="fp32"):
    Win = Tensor(R=fh, S=fw)
    Y = Tensor(A=X.shape[0], P=X.shape[1] * fh, Q=X.shape[2] * fw, dtype="fp32")
    for a in Dim("A", parallel=True):
        for h in Dim("H", parallel=True):
            for w in Dim("W", parallel=True):
                for r in Dim("R", parallel=True):
                    for s in Dim("S", parallel=True):
                        Y[a, h * fh + r, w * fw + s] = X[a, h, w]
    return Y


@kernel
def upsample_nearest3d_int(X: Tensor("A,D,H,W"), fd: int, fh: int, fw: int) -> Tensor("A,Z,P,Q", dtype="fp32"):
    Win = Tensor(T=fd, R=fh, S=fw)
    Y = Tensor(A=X.shape[0], Z=X.shape[1] * fd, P=X.shape[2] * fh, Q=X.shape[3] * fw, dtype="fp32")
    for a in Dim("A", parallel=True):
        for d in Dim("D", parallel=True):
            for h in Dim("H", parallel=True):
                for w in Dim("W", parallel=True):
                    for t in Dim("T", parallel=True):
                        for r in Dim("R", parallel=True):
                            for s in Dim("S", parallel=True):
                                Y[a, d * fd + t, h * fh + r, w * fw + s] = X[a, d, h, w]
    return Y


# Source row of output row p for nearest (exact = 0: floor(p * scale)) and nearest-exact
# (exact = 1: floor((p + 0.5) * scale)) interpolation, clamped to the input.
@kernel
def nearest_index(n_in: int, n_out: int, scale: float, exact: int) -> Tensor("P", dtype="int64"):
    I = Tensor(P=n_out, dtype="int64")
    for p in Dim("P", parallel=True):
        I[p] = min(floor((p + 0.5 * exact) * scale), n_in - 1)
    return I


# Linear interpolation: source coordinate max((p + off) * scale - off, 0) (off = 0.5 without
# align_corners, 0 with it); rows I0 = floor, I1 = the next row (clamped) and weight L of I1.
@kernel
def linear_index(n_in: int, n_out: int, scale: float, off: float) -> (Tensor("P", dtype="int64"), Tensor("P", dtype="int64"), Tensor("P", dtype="fp32")):
    I0 = Tensor(P=n_out, dtype="int64")
    I1 = Tensor(P=n_out, dtype="int64")
    L = Tensor(P=n_out, dtype="fp32")
    for p in Dim("P", parallel=True):
        I0[p] = min(floor(max((p + off) * scale - off, 0.0)), n_in - 1)
        I1[p] = min(floor(max((p + off) * scale - off, 0.0)) + 1, n_in - 1)
        L[p] = max((p + off) * scale - off, 0.0) - min(floor(max((p + off) * scale - off, 0.0)), n_in - 1)
    return I0, I1, L


# G0, G1 = gather(X[A, R, B], I0 / I1, dim=1): [P, A, B] -> [A, P, B]; one sub and one
# multiply-add per element: g0 + l * (g1 - g0).
@kernel
def lerp_rows(G0: Tensor("P,A,B"), G1: Tensor("P,A,B"), L: Tensor("P")) -> Tensor("A,P,B", dtype="fp32"):
    Y = Tensor(A=G0.shape[1], P=G0.shape[0], B=G0.shape[2], dtype="fp32")
    for a in Dim("A", parallel=True):
        for p in Dim("P", parallel=True):
            for b in Dim("B", parallel=True):
                Y[a, p, b] = G0[p, a, b] + L[p] * (G1[p, a, b] - G0[p, a, b])
    return Y
