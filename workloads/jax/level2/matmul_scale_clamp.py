# Matmul of two inputs, multiply by a constant, then clamp to [-1, 1].
import jax
import jax.numpy as jnp

B, M, K, N = 4, 256, 128, 256
SCALE = 0.1


def forward(a, b):
    return jnp.clip(jnp.matmul(a, b) * SCALE, -1.0, 1.0)


def get_inputs(key):
    ka, kb = jax.random.split(key)
    return [jax.random.normal(ka, (B, M, K)), jax.random.normal(kb, (B, K, N))]
