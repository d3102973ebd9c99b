# LeNet-5 (Flax, NHWC): two conv + tanh + avg-pool stages, then three fully connected layers (32x32 inputs).
# twin: workloads/level3/lenet5.py
import jax
from flax import linen as nn

B, NUM_CLASSES = 128, 10


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.avg_pool(jax.numpy.tanh(nn.Conv(6, (5, 5), padding="VALID")(x)), (2, 2), (2, 2))
        x = nn.avg_pool(jax.numpy.tanh(nn.Conv(16, (5, 5), padding="VALID")(x)), (2, 2), (2, 2))
        x = x.reshape(x.shape[0], -1)
        x = jax.numpy.tanh(nn.Dense(120)(x))
        x = jax.numpy.tanh(nn.Dense(84)(x))
        return nn.Dense(NUM_CLASSES)(x)


def get_inputs(key):
    return [jax.random.uniform(key, (B, 32, 32, 1))]
