# Sigmoid activation (jax.nn.sigmoid) on a [4096, 65536] tensor.
# twin: workloads/level1/sigmoid.py
import jax
import jax.numpy as jnp

B, D = 4096, 65536


def forward(x):
    return jax.nn.sigmoid(x)


def get_inputs(key):
    return [jax.random.normal(key, (B, D))]
