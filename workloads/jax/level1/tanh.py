# Tanh activation (jnp.tanh) on a [4096, 65536] tensor.
# twin: workloads/level1/tanh.py
import jax
import jax.numpy as jnp

B, D = 4096, 65536


def forward(x):
    return jnp.tanh(x)


def get_inputs(key):
    return [jax.random.normal(key, (B, D))]
