# Matrix product of two fp32 matrices: C = A @ B.
import numpy as np

M = 256
K = 128
N = 192


def get_inputs(rng):
    return [rng.standard_normal((M, K)).astype(np.float32),
            rng.standard_normal((K, N)).astype(np.float32)]


def forward(a, b):
    return a @ b
