# GPT-2 block: pre-LN causal multi-head self-attention (hand-written, mask via nn.make_causal_mask
# and jnp.where), tanh-GELU MLP (4x), residual adds.
import jax
import jax.numpy as jnp
from flax import linen as nn

B, T, C, NH = 2, 128, 256, 4


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        hs = C // NH
        h = nn.LayerNorm(epsilon=1e-5, name="ln_1")(x)
        qkv = nn.Dense(3 * C, name="c_attn")(h)
        q, k, v = jnp.split(qkv, 3, axis=-1)
        q, k, v = (t.reshape(B, T, NH, hs).transpose(0, 2, 1, 3) for t in (q, k, v))
        att = (q @ k.transpose(0, 1, 3, 2)) * (1.0 / hs**0.5)
        mask = nn.make_causal_mask(jnp.ones((B, T)))  # [B, 1, T, T]
        att = jnp.where(mask, att, -jnp.inf)
        att = jax.nn.softmax(att, axis=-1)
        y = (att @ v).transpose(0, 2, 1, 3).reshape(B, T, C)
        x = x + nn.Dense(C, name="c_proj")(y)
        h = nn.LayerNorm(epsilon=1e-5, name="ln_2")(x)
        h = nn.Dense(C, name="mlp_proj")(nn.gelu(nn.Dense(4 * C, name="mlp_fc")(h), approximate=True))
        return x + h


def get_inputs(key):
    return [jax.random.normal(key, (B, T, C))]
