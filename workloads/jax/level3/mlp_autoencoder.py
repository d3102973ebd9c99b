# Dense autoencoder: encoder 784 -> 256 -> 32 (ReLU), decoder 32 -> 256 -> 784 with a sigmoid output.
import jax
from flax import linen as nn

B, IN, HID, LATENT = 64, 784, 256, 32


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        z = nn.Dense(LATENT, name="enc2")(nn.relu(nn.Dense(HID, name="enc1")(x)))
        h = nn.relu(nn.Dense(HID, name="dec1")(nn.relu(z)))
        return jax.nn.sigmoid(nn.Dense(IN, name="dec2")(h))


def get_inputs(key):
    return [jax.random.uniform(key, (B, IN))]
