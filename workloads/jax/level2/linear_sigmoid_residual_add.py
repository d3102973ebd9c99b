# Linear layer with a sigmoid gate multiplied into the input, plus a residual add.
# twin: workloads/level2/linear_sigmoid_residual_add.py
import jax
from flax import linen as nn

B, S, H = 64, 256, 2048


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        gate = jax.nn.sigmoid(nn.Dense(H)(x))
        return x + gate * x


def get_inputs(key):
    return [jax.random.normal(key, (B, S, H))]
