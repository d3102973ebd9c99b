# GEMM followed by Swish (x * sigmoid(x), written out) and a sum over the feature dimension.
# twin: workloads/level2/gemm_swish_sum.py
import jax
import jax.numpy as jnp
from flax import linen as nn

B, K, N = 128, 4096, 2048


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Dense(N)(x)
        x = x * jax.nn.sigmoid(x)
        return jnp.sum(x, axis=1)


def get_inputs(key):
    return [jax.random.uniform(key, (B, K))]
