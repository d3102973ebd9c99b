# Data-dependent indexing of the PyTorch front end. A kernel cannot index with data (docs/ir.md
# §3.2), so each operator becomes a small integer kernel that computes flat row numbers and the
# `gather` builtin that fetches them (index_select semantics along one dim). Indices are
# computed in int64 (exact: integer targets compute in double, exact below 2^53).
from solar.ir import kernel, Tensor, Dim


# torch.gather along the middle dim of a [A, R, B] table (flattened to [A*R*B] by a view):
# row a*R*B + index*B + b.
@kernel
def gather_rows(I: Tensor("A,J,B"), rows: int) -> Tensor("A,J,B", dtype="int64"):
    L = Tensor(A=I.shape[0], J=I.shape[1], B=I.shape[2], dtype="int64")
    for a in Dim("A", parallel=True):
        for j in Dim("J", parallel=True):
            for b in Dim("B", parallel=True):
                L[a, j, b] = (a * rows + I[a, j, b]) * size("B") + b
    return L


# Advanced indexing (x[i], x[i, j], ...): negative indices wrap; k indices (broadcast to one
# shape N) address the product of their dims (sizes n0, n1, ...) row-major.
@kernel
def index_wrap1(I: Tensor("N"), n0: int) -> Tensor("N", dtype="int64"):
    L = Tensor(N=I.shape[0], dtype="int64")
    for i in Dim("N", parallel=True):
        L[i] = select(I[i] < 0, I[i] + n0, I[i])
    return L


@kernel
def index_lin2(I0: Tensor("N"), I1: Tensor("N"), n0: int, n1: int) -> Tensor("N", dtype="int64"):
    L = Tensor(N=I0.shape[0], dtype="int64")
    for i in Dim("N", parallel=True):
        L[i] = select(I0[i] < 0, I0[i] + n0, I0[i]) * n1 + select(I1[i] < 0, I1[i] + n1, I1[i])
    return L


@kernel
def index_lin3(I0: Tensor("N"), I1: Tensor("N"), I2: Tensor("N"), n0: int, n1: int, n2: int) -> Tensor("N", dtype="int64"):
    L = Tensor(N=I0.shape[0], dtype="int64")
    for i in Dim("N", parallel=True):
        L[i] = (select(I0[i] < 0, I0[i] + n0, I0[i]) * n1 + select(I1[i] < 0, I1[i] + n1, I1[i])) * n2 + select(I2[i] < 0, I2[i] + n2, I2[i])
    return L


# torch.flip of the middle dim (affine: the index runs backwards).
@kernel
def flip_mid(X: Tensor("A,R,B")) -> Tensor("A,R,B", dtype="fp32"):
    Y = Tensor(A=X.shape[0], R=X.shape[1], B=X.shape[2], dtype="fp32")
    for a in Dim("A", parallel=True):
        for r in Dim("R", parallel=True):
            for b in Dim("B", parallel=True):
                Y[a, r, b] = X[a, size("R") - 1 - r, b]
    return Y


# torch.diagonal(x, offset, dim1, dim2) with x viewed as [A, R, B, S, C] (dim1 = R, dim2 = S):
# element i of the diagonal is X[a, i + r0, b, i + s0, c]; output [A, B, C, I].
@kernel
def diagonal_mid(X: Tensor("A,R,B,S,C"), r0: int, s0: int, n: int) -> Tensor("A,B,C,I", dtype="fp32"):
    Y = Tensor(A=X.shape[0], B=X.shape[2], C=X.shape[4], I=n, dtype="fp32")
    for a in Dim("A", parallel=True):
        for b in Dim("B", parallel=True):
            for c in Dim("C", parallel=True):
                for i in Dim("I", parallel=True):
                    Y[a, b, c, i] = X[a, i + r0, b, i + s0, c]
    return Y


# masked_scatter: where M is nonzero, the number of nonzero elements before it (the element of
# the source it takes, in row-major order); 0 elsewhere (a valid row, not taken).
@kernel
def masked_positions(M: Tensor("N")) -> Tensor("N", dtype="int64"):
    S = Tensor(N=M.shape[0], dtype="int64")
    P = Tensor(N=M.shape[0], dtype="int64")
    for i in Dim("N"):
        if i == 0:
            S[i] = select(M[i] != 0, 1, 0)
        else:
            S[i] = S[i - 1] + select(M[i] != 0, 1, 0)
    for i in Dim("N", parallel=True):
        P[i] = select(M[i] != 0, S[i] - 1, 0)
    return P
