# Max reduction over axis 1 (values only) of a [batch, dim1, dim2] tensor.
# twin: workloads/level1/max_reduction_dim.py
import jax
import jax.numpy as jnp

B, D1, D2 = 64, 2048, 4095


def forward(x):
    return jnp.max(x, axis=1)


def get_inputs(key):
    return [jax.random.normal(key, (B, D1, D2))]
