# Two parallel Linear branches (ReLU and tanh), concatenated along the features, then a Linear.
import jax
import jax.numpy as jnp
from flax import linen as nn

B, K, N1, N2, OUT = 64, 256, 128, 256, 64


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        a = nn.relu(nn.Dense(N1, name="branch_a")(x))
        b = jnp.tanh(nn.Dense(N2, name="branch_b")(x))
        return nn.Dense(OUT, name="head")(jnp.concatenate([a, b], axis=-1))


def get_inputs(key):
    return [jax.random.normal(key, (B, K))]
