# A JAX program with a primitive that has no lowering (asinh): the agent's fallback test.
import jax
import jax.numpy as jnp

N = 16
D = 32


def forward(x):
    return jnp.arcsinh(x) * 2.0


def get_inputs(key):
    return [jax.random.normal(key, (N, D), jnp.float32)]
