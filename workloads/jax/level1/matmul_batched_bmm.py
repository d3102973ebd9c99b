# Batched matrix multiplication [B, M, K] x [B, K, N].
# twin: workloads/level1/matmul_batched_bmm.py
import jax
import jax.numpy as jnp

BATCH, M, K, N = 128, 512, 1024, 384


def forward(a, b):
    return jnp.matmul(a, b)


def get_inputs(key):
    k1, k2 = jax.random.split(key)
    return [jax.random.uniform(k1, (BATCH, M, K)), jax.random.uniform(k2, (BATCH, K, N))]
