# MLP classifier: three Dense layers (784 -> 512 -> 256 -> 10) with ReLU between them.
import jax
from flax import linen as nn

B, IN, H1, H2, OUT = 64, 784, 512, 256, 10


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(H1)(x))
        x = nn.relu(nn.Dense(H2)(x))
        return nn.Dense(OUT)(x)


def get_inputs(key):
    return [jax.random.normal(key, (B, IN))]
