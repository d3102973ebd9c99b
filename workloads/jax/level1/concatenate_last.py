# Concatenation of two [B, D1] and [B, D2] tensors along the last axis (jnp.concatenate).
import jax
import jax.numpy as jnp

B, D1, D2 = 256, 2048, 1024


def forward(a, b):
    return jnp.concatenate([a, b], axis=-1)


def get_inputs(key):
    k1, k2 = jax.random.split(key)
    return [jax.random.normal(k1, (B, D1)), jax.random.normal(k2, (B, D2))]
