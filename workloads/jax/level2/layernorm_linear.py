# LayerNorm over the features, then a Linear projection (256 -> 512).
import jax
from flax import linen as nn

B, S, D, N = 4, 128, 256, 512


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Dense(N)(nn.LayerNorm()(x))


def get_inputs(key):
    return [jax.random.normal(key, (B, S, D))]
