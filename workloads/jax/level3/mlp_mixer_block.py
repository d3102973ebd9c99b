# MLP-Mixer block: LayerNorm + token-mixing MLP (across patches) and LayerNorm + channel-mixing MLP, with residuals.
import jax
import jax.numpy as jnp
from flax import linen as nn

B, P, C, TOKEN_HIDDEN, CHANNEL_HIDDEN = 8, 64, 256, 128, 1024


class MlpBlock(nn.Module):
    hidden: int

    @nn.compact
    def __call__(self, x):
        y = nn.gelu(nn.Dense(self.hidden)(x))
        return nn.Dense(x.shape[-1])(y)


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        y = nn.LayerNorm()(x)
        y = jnp.swapaxes(y, 1, 2)
        y = MlpBlock(TOKEN_HIDDEN, name="token_mixing")(y)
        x = x + jnp.swapaxes(y, 1, 2)
        y = nn.LayerNorm()(x)
        return x + MlpBlock(CHANNEL_HIDDEN, name="channel_mixing")(y)


def get_inputs(key):
    return [jax.random.normal(key, (B, P, C))]
