# Causal multi-head self-attention with flax nn.MultiHeadDotProductAttention and nn.make_causal_mask.
import jax
import jax.numpy as jnp
from flax import linen as nn

B, T, D, NH = 2, 128, 256, 8


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        mask = nn.make_causal_mask(jnp.ones((B, T)))
        return nn.MultiHeadDotProductAttention(num_heads=NH, qkv_features=D, deterministic=True)(
            x, x, mask=mask
        )


def get_inputs(key):
    return [jax.random.normal(key, (B, T, D))]
