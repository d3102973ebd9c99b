# Rectangular matrix multiplication C[M, N] = A[M, K] @ B[K, N] with a long reduction.
# twin: workloads/level1/matmul_rectangular.py
import jax
import jax.numpy as jnp

M, K, N = 2048, 8192, 1024


def forward(a, b):
    return a @ b


def get_inputs(key):
    k1, k2 = jax.random.split(key)
    return [jax.random.uniform(k1, (M, K)), jax.random.uniform(k2, (K, N))]
