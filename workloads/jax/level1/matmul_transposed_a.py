# Matmul with a transposed left operand: C = A.T @ B, A stored as [K, M].
# twin: workloads/level1/matmul_transposed_a.py
import jax
import jax.numpy as jnp

M, K, N = 2048, 4096, 2048


def forward(a, b):
    return a.T @ b


def get_inputs(key):
    k1, k2 = jax.random.split(key)
    return [jax.random.uniform(k1, (K, M)), jax.random.uniform(k2, (K, N))]
