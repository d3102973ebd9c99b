# Sum reduction over axis 1 (keepdims) of a [batch, dim1, dim2] tensor.
# twin: workloads/level1/sum_reduction_dim.py
import jax
import jax.numpy as jnp

B, D1, D2 = 64, 2048, 4095


def forward(x):
    return jnp.sum(x, axis=1, keepdims=True)


def get_inputs(key):
    return [jax.random.normal(key, (B, D1, D2))]
