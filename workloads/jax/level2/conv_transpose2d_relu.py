# Strided ConvTranspose2d (4x4 kernel, stride 2: 2x upsampling, NHWC), then ReLU.
import jax
from flax import linen as nn

B, H, W, CIN, COUT = 4, 16, 16, 32, 16


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.ConvTranspose(COUT, (4, 4), strides=(2, 2), padding="SAME")(x)
        return nn.relu(x)


def get_inputs(key):
    return [jax.random.normal(key, (B, H, W, CIN))]
