# Executor benchmark: batched matrix multiply, 16 x (256x256 @ 256x256), fp32.
# IR builtins (size, exp, inf, ...) are names the IR defines, not Python ones.
# ruff: noqa: F821, F841
from solar.ir import Dim, Tensor, kernel


@kernel
def bmm(A: Tensor("B,M,K"), Bm: Tensor("B,K,N")) -> Tensor("B,M,N"):
    C = Tensor(B=A.shape[0], M=A.shape[1], N=Bm.shape[2])
    for b in Dim("B", parallel=True):
        for m in Dim("M", parallel=True):
            for n in Dim("N", parallel=True):
                for k in Dim("K"):
                    C[b, m, n] += A[b, m, k] * Bm[b, k, n]
    return C


DIMS = {"B": 16, "M": 256, "N": 256, "K": 256}


def model(a: Tensor("B,M,K", role="input"), b: Tensor("B,K,N", role="input")):
    return bmm(a, b)
