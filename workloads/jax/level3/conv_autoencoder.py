# Convolutional autoencoder (NHWC): two stride-2 convs, a Dense bottleneck, Dense back,
# two stride-2 ConvTranspose layers and a sigmoid output.
import jax
import jax.numpy as jnp
from flax import linen as nn

B, IMG, CIN, C1, C2, LATENT = 8, 32, 1, 16, 32, 64


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        h = nn.relu(nn.Conv(C1, (3, 3), (2, 2), padding="SAME")(x))
        h = nn.relu(nn.Conv(C2, (3, 3), (2, 2), padding="SAME")(h))
        shape = h.shape
        z = nn.Dense(LATENT, name="encode")(h.reshape(shape[0], -1))
        h = nn.relu(nn.Dense(shape[1] * shape[2] * shape[3], name="decode")(z)).reshape(shape)
        h = nn.relu(nn.ConvTranspose(C1, (3, 3), (2, 2), padding="SAME")(h))
        return jax.nn.sigmoid(nn.ConvTranspose(CIN, (3, 3), (2, 2), padding="SAME")(h))


def get_inputs(key):
    return [jax.random.uniform(key, (B, IMG, IMG, CIN))]
