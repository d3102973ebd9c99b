# Matmul with a transposed right operand: C = A @ B.T, B stored as [N, K].
# twin: workloads/level1/matmul_transposed_b.py
import jax
import jax.numpy as jnp

M, K, N = 4096, 2048, 3072


def forward(a, b):
    return jnp.matmul(a, b.T)


def get_inputs(key):
    k1, k2 = jax.random.split(key)
    return [jax.random.uniform(k1, (M, K)), jax.random.uniform(k2, (N, K))]
