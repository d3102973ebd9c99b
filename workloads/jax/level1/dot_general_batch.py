# lax.dot_general with a batch axis, contracting the last axis of both: scores [B, M, N] = q @ k^T.
import jax
import jax.numpy as jnp

B, M, N, K = 8, 256, 256, 64


def forward(q, k):
    return jax.lax.dot_general(q, k, dimension_numbers=(((2,), (2,)), ((0,), (0,))))


def get_inputs(key):
    k1, k2 = jax.random.split(key)
    return [jax.random.normal(k1, (B, M, K)), jax.random.normal(k2, (B, N, K))]
