# Standalone BatchNorm in training mode (batch statistics; the batch_stats collection is updated).
import jax
from flax import linen as nn

B, H, W, C = 16, 32, 32, 64


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.BatchNorm(use_running_average=False, momentum=0.9)(x)


def get_inputs(key):
    return [jax.random.normal(key, (B, H, W, C))]
