# Linear (512 -> 1000) then softmax over the classes.
import jax
from flax import linen as nn

B, K, N = 64, 512, 1000


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        return jax.nn.softmax(nn.Dense(N)(x), axis=-1)


def get_inputs(key):
    return [jax.random.normal(key, (B, K))]
