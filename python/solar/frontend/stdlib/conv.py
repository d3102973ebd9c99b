# Convolutions of the PyTorch front end. Channels are split into groups by the lowering
# (reshape views): input [N, G, C, H, W], weight [G, O, C, R, S], output [N, G, O, P, Q], so
# ordinary, grouped and depthwise convolutions share one affine kernel. A 1-D convolution is
# a 2-D one with H = R = 1.
from solar.ir import kernel, Tensor, Dim


@kernel
def conv2d(X: Tensor("N,G,C,H,W"), K: Tensor("G,O,C,R,S"), sh: int, sw: int, ph: int, pw: int, dh: int, dw: int) -> Tensor("N,G,O,P,Q", dtype="fp32"):
    Y = Tensor(N=X.shape[0], G=X.shape[1], O=K.shape[1], P=(X.shape[3] + 2 * ph - dh * (K.shape[3] - 1) - 1) // sh + 1, Q=(X.shape[4] + 2 * pw - dw * (K.shape[4] - 1) - 1) // sw + 1, dtype="fp32")
    for n in Dim("N", parallel=True):
        for g in Dim("G", parallel=True):
            for o in Dim("O", parallel=True):
                for p in Dim("P", parallel=True):
                    for q in Dim("Q", parallel=True):
                        for c in Dim("C"):
                            for r in Dim("R"):
                                for s in Dim("S"):
                                    if 0 <= p * sh + r * dh - ph and p * sh + r * dh - ph < size("H") and 0 <= q * sw + s * dw - pw and q * sw + s * dw - pw < size("W"):
                                        Y[n, g, o, p, q] += X[n, g, c, p * sh + r * dh - ph, q * sw + s * dw - pw] * K[g, o, c, r, s]
    return Y


# The weight gradient of conv2d (a training step's convolution_backward): the same iteration
# space as the forward convolution (as many MACs), reducing over N, P, Q for each tap.
@kernel
def conv2d_wgrad(X: Tensor("N,G,C,H,W"), GY: Tensor("N,G,O,P,Q"), kr: int, ks: int, sh: int, sw: int, ph: int, pw: int, dh: int, dw: int) -> Tensor("G,O,C,R,S", dtype="fp32"):
    K = Tensor(G=X.shape[1], O=GY.shape[2], C=X.shape[2], R=kr, S=ks, dtype="fp32")
    for g in Dim("G", parallel=True):
        for o in Dim("O", parallel=True):
            for c in Dim("C", parallel=True):
                for r in Dim("R", parallel=True):
                    for s in Dim("S", parallel=True):
                        for n in Dim("N"):
                            for p in Dim("P"):
                                for q in Dim("Q"):
                                    if 0 <= p * sh + r * dh - ph and p * sh + r * dh - ph < size("H") and 0 <= q * sw + s * dw - pw and q * sw + s * dw - pw < size("W"):
                                        K[g, o, c, r, s] += X[n, g, c, p * sh + r * dh - ph, q * sw + s * dw - pw] * GY[n, g, o, p, q]
    return K


@kernel
def conv3d(X: Tensor("N,G,C,D,H,W"), K: Tensor("G,O,C,T,R,S"), sd: int, sh: int, sw: int, pd: int, ph: int, pw: int, dd: int, dh: int, dw: int) -> Tensor("N,G,O,Z,P,Q", dtype="fp32"):
    Y = Tensor(N=X.shape[0], G=X.shape[1], O=K.shape[1], Z=(X.shape[3] + 2 * pd - dd * (K.shape[3] - 1) - 1) // sd + 1, P=(X.shape[4] + 2 * ph - dh * (K.shape[4] - 1) - 1) // sh + 1, Q=(X.shape[5] + 2 * pw - dw * (K.shape[5] - 1) - 1) // sw + 1, dtype="fp32")
    for n in Dim("N", parallel=True):
        for g in Dim("G", parallel=True):
            for o in Dim("O", parallel=True):
                for z in Dim("Z", parallel=True):
                    for p in Dim("P", parallel=True):
                        for q in Dim("Q", parallel=True):
                            for c in Dim("C"):
                                for t in Dim("T"):
                                    for r in Dim("R"):
                                        for s in Dim("S"):
                                            if 0 <= z * sd + t * dd - pd and z * sd + t * dd - pd < size("D") and 0 <= p * sh + r * dh - ph and p * sh + r * dh - ph < size("H") and 0 <= q * sw + s * dw - pw and q * sw + s * dw - pw < size("W"):
                                                Y[n, g, o, z, p, q] += X[n, g, c, z * sd + t * dd - pd, p * sh + r * dh - ph, q * sw + s * dw - pw] * K[g, o, c, t, r, s]
    return Y


# Transposed convolution in scatter form: each input pixel adds its weighted taps to the
# output at p*stride + r*dil - pad. Weight layout [G, C, O, R, S] (PyTorch's [C_in, O/G, ...]).
@kernel
def conv_transpose2d(X: Tensor("N,G,C,H,W"), K: Tensor("G,C,O,R,S"), sh: int, sw: int, ph: int, pw: int, dh: int, dw: int, oph: int, opw: int) -> Tensor("N,G,O,P,Q", dtype="fp32"):
    Y = Tensor(N=X.shape[0], G=X.shape[1], O=K.shape[2], P=(X.shape[3] - 1) * sh - 2 * ph + dh * (K.shape[3] - 1) + oph + 1, Q=(X.shape[4] - 1) * sw - 2 * pw + dw * (K.shape[4] - 1) + opw + 1, dtype="fp32")
    for n in Dim("N", parallel=True):
        for g in Dim("G", parallel=True):
            for o in Dim("O", parallel=True):
                for c in Dim("C"):
                    for h in Dim("H"):
                        for w in Dim("W"):
                            for r in Dim("R"):
                                for s in Dim("S"):
                                    if 0 <= h * sh + r * dh - ph and h * sh + r * dh - ph < size("P") and 0 <= w * sw + s * dw - pw and w * sw + s * dw - pw < size("Q"):
                                        Y[n, g, o, h * sh + r * dh - ph, w * sw + s * dw - pw] += X[n, g, c, h, w] * K[g, c, o, r, s]
    return Y


@kernel
def add_channel_bias(X: Tensor("N,C,S"), B: Tensor("C")) -> Tensor("N,C,S", dtype="fp32"):
    Y = Tensor(N=X.shape[0], C=X.shape[1], S=X.shape[2], dtype="fp32")
    for n in Dim("N", parallel=True):
        for c in Dim("C", parallel=True):
            for s in Dim("S", parallel=True):
                Y[n, c, s] = X[n, c, s] + B[c]
    return Y


# 3-D transposed convolution, scatter form as conv_transpose2d. Weight [G, C, O, T, R, S].
@kernel
def conv_transpose3d(X: Tensor("N,G,C,D,H,W"), K: Tensor("G,C,O,T,R,S"), sd: int, sh: int, sw: int, pd: int, ph: int, pw: int, dd: int, dh: int, dw: int, opd: int, oph: int, opw: int) -> Tensor("N,G,O,Z,P,Q", dtype="fp32"):
    Y = Tensor(N=X.shape[0], G=X.shape[1], O=K.shape[2], Z=(X.shape[3] - 1) * sd - 2 * pd + dd * (K.shape[3] - 1) + opd + 1, P=(X.shape[4] - 1) * sh - 2 * ph + dh * (K.shape[4] - 1) + oph + 1, Q=(X.shape[5] - 1) * sw - 2 * pw + dw * (K.shape[5] - 1) + opw + 1, dtype="fp32")
    for n in Dim("N", parallel=True):
        for g in Dim("G", parallel=True):
            for o in Dim("O", parallel=True):
                for c in Dim("C"):
                    for d in Dim("D"):
                        for h in Dim("H"):
                            for w in Dim("W"):
                                for t in Dim("T"):
                                    for r in Dim("R"):
                                        for s in Dim("S"):
                                            if 0 <= d * sd + t * dd - pd and d * sd + t * dd - pd < size("Z") and 0 <= h * sh + r * dh - ph and h * sh + r * dh - ph < size("P") and 0 <= w * sw + s * dw - pw and w * sw + s * dw - pw < size("Q"):
                                                Y[n, g, o, d * sd + t * dd - pd, h * sh + r * dh - ph, w * sw + s * dw - pw] += X[n, g, c, d, h, w] * K[g, c, o, t, r, s]
    return Y
