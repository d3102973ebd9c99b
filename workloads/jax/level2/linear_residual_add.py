# Linear (D -> D), GELU, then a residual add of the input.
import jax
from flax import linen as nn

B, S, D = 4, 128, 512


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        return x + nn.gelu(nn.Dense(D)(x))


def get_inputs(key):
    return [jax.random.normal(key, (B, S, D))]
