# Argmin over the last axis of a [batch, dim1, dim2] tensor (int32 indices; PyTorch's are int64).
# counterpart: workloads/level1/argmin_dim.py (counts differ by design: docs/jax.md, "Twins")
import jax
import jax.numpy as jnp

B, D1, D2 = 64, 2048, 4095


def forward(x):
    return jnp.argmin(x, axis=-1)


def get_inputs(key):
    return [jax.random.normal(key, (B, D1, D2))]
