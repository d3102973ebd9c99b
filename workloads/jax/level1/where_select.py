# Elementwise select jnp.where(mask, x, y) with a boolean mask input.
# twin: workloads/level1/where_select.py
import jax
import jax.numpy as jnp

B, D = 4096, 65536


def forward(mask, x, y):
    return jnp.where(mask, x, y)


def get_inputs(key):
    km, kx, ky = jax.random.split(key, 3)
    mask = jax.random.uniform(km, (B, D)) > 0.5
    return [mask, jax.random.normal(kx, (B, D)), jax.random.normal(ky, (B, D))]
