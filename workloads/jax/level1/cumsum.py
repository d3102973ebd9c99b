# Cumulative sum (inclusive prefix sum) along axis 1 of a [batch, seq] tensor.
# twin: workloads/level1/cumsum.py
import jax
import jax.numpy as jnp

B, S = 8192, 32768


def forward(x):
    return jnp.cumsum(x, axis=1)


def get_inputs(key):
    return [jax.random.uniform(key, (B, S))]
