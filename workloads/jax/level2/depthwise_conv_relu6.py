# Depthwise-separable convolution: depthwise 3x3 conv (feature_group_count=C), ReLU6, pointwise 1x1 conv.
import jax
from flax import linen as nn

B, H, W, C, COUT = 4, 32, 32, 32, 64


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Conv(C, (3, 3), padding="SAME", feature_group_count=C, name="depthwise")(x)
        x = nn.relu6(x)
        return nn.Conv(COUT, (1, 1), name="pointwise")(x)


def get_inputs(key):
    return [jax.random.normal(key, (B, H, W, C))]
