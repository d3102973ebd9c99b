# Clip every element of a [B, D] tensor into [-0.5, 0.5] with jnp.clip.
import jax
import jax.numpy as jnp

B, D = 256, 4096


def forward(x):
    return jnp.clip(x, -0.5, 0.5)


def get_inputs(key):
    return [jax.random.normal(key, (B, D))]
