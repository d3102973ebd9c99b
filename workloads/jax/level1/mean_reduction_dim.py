# Mean reduction over axis 1 of a [batch, dim1, dim2] tensor.
# twin: workloads/level1/mean_reduction_dim.py
import jax
import jax.numpy as jnp

B, D1, D2 = 64, 2048, 4095


def forward(x):
    return jnp.mean(x, axis=1)


def get_inputs(key):
    return [jax.random.normal(key, (B, D1, D2))]
