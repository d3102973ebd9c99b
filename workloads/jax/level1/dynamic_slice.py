# lax.dynamic_slice with a constant start (0, 16): a [B, 64] window of a [B, D] tensor.
import jax
import jax.numpy as jnp

B, D, L = 256, 4096, 64


def forward(x):
    return jax.lax.dynamic_slice(x, (0, 16), (B, L))


def get_inputs(key):
    return [jax.random.normal(key, (B, D))]
