# Linear projection over a sequence, cumulative sum along the time axis, then ReLU.
# twin: workloads/level2/gemm_cumsum_relu.py
import jax
import jax.numpy as jnp
from flax import linen as nn

B, S, K, N = 32, 2048, 1024, 1024


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Dense(N)(x)
        x = jnp.cumsum(x, axis=1)
        return jax.nn.relu(x)


def get_inputs(key):
    return [jax.random.normal(key, (B, S, K))]
