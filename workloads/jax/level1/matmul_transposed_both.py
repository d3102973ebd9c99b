# Matmul with both operands transposed: C = A.T @ B.T.
# twin: workloads/level1/matmul_transposed_both.py
import jax
import jax.numpy as jnp

M, K, N = 2048, 4096, 1024


def forward(a, b):
    return jnp.matmul(a.T, b.T)


def get_inputs(key):
    k1, k2 = jax.random.split(key)
    return [jax.random.uniform(k1, (K, M)), jax.random.uniform(k2, (N, K))]
