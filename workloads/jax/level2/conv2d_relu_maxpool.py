# Conv2d 3x3 (NHWC, SAME padding), ReLU, then 2x2 max pooling with stride 2.
import jax
from flax import linen as nn

B, H, W, CIN, COUT = 8, 32, 32, 16, 32


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Conv(COUT, (3, 3), padding="SAME")(x)
        x = nn.relu(x)
        return nn.max_pool(x, (2, 2), strides=(2, 2))


def get_inputs(key):
    return [jax.random.normal(key, (B, H, W, CIN))]
