# Matmul of a 3-D tensor by a 2-D matrix: [B, M, K] @ [K, N] (weight shared across the batch).
# twin: workloads/level1/matmul_3d_by_2d.py
import jax
import jax.numpy as jnp

BATCH, M, K, N = 16, 1024, 2048, 4096


def forward(a, b):
    return jnp.matmul(a, b)


def get_inputs(key):
    k1, k2 = jax.random.split(key)
    return [jax.random.uniform(k1, (BATCH, M, K)), jax.random.uniform(k2, (K, N))]
