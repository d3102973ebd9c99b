# U-Net-style down/up block (NHWC): double conv, max-pool down, bottleneck double conv,
# ConvTranspose 2x up, skip concat, double conv and a 1x1 output conv.
import jax
import jax.numpy as jnp
from flax import linen as nn

B, IMG, CIN, C, COUT = 2, 64, 3, 32, 2


class DoubleConv(nn.Module):
    features: int

    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Conv(self.features, (3, 3), padding="SAME")(x))
        return nn.relu(nn.Conv(self.features, (3, 3), padding="SAME")(x))


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        skip = DoubleConv(C)(x)
        y = nn.max_pool(skip, (2, 2), strides=(2, 2))
        y = DoubleConv(2 * C)(y)
        y = nn.ConvTranspose(C, (2, 2), strides=(2, 2))(y)
        y = jnp.concatenate([skip, y], axis=-1)
        y = DoubleConv(C)(y)
        return nn.Conv(COUT, (1, 1))(y)


def get_inputs(key):
    return [jax.random.normal(key, (B, IMG, IMG, CIN))]
