# Transpose of a 3-D [A, B, C] array to [C, A, B] with jnp.transpose.
import jax
import jax.numpy as jnp

A, B, C = 32, 128, 256


def forward(x):
    return jnp.transpose(x, (2, 0, 1))


def get_inputs(key):
    return [jax.random.normal(key, (A, B, C))]
