# Conv2d 3x3 (no bias), BatchNorm with running statistics (inference), then ReLU.
import jax
from flax import linen as nn

B, H, W, CIN, COUT = 8, 32, 32, 16, 32


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Conv(COUT, (3, 3), padding="SAME", use_bias=False)(x)
        x = nn.BatchNorm(use_running_average=True)(x)
        return nn.relu(x)


def get_inputs(key):
    return [jax.random.normal(key, (B, H, W, CIN))]
