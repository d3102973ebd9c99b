# Executor benchmark: matrix multiply C = A @ B, 1024^3, fp32.
# M and N carry no dependence (parallel); K is the reduction dim.
# IR builtins (size, exp, inf, ...) are names the IR defines, not Python ones.
# ruff: noqa: F821, F841
from solar.ir import Dim, Tensor, kernel


@kernel
def matmul(A: Tensor("M,K"), B: Tensor("K,N")) -> Tensor("M,N"):
    C = Tensor(M=A.shape[0], N=B.shape[1])
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            for k in Dim("K"):
                C[m, n] += A[m, k] * B[k, n]
    return C


DIMS = {"M": 1024, "N": 1024, "K": 1024}


def model(a: Tensor("M,K", role="input"), b: Tensor("K,N", role="weight")):
    return matmul(a, b)
