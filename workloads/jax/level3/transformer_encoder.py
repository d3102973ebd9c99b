# Small transformer encoder: 2 post-LN layers of multi-head self-attention
# (nn.MultiHeadDotProductAttention) and a ReLU feed-forward, dropout off.
import jax
from flax import linen as nn

B, S, D, NH, FF, LAYERS = 2, 128, 256, 4, 1024, 2


class EncoderLayer(nn.Module):
    @nn.compact
    def __call__(self, x):
        a = nn.MultiHeadDotProductAttention(num_heads=NH, dropout_rate=0.1, deterministic=True)(x, x)
        x = nn.LayerNorm()(x + nn.Dropout(0.1, deterministic=True)(a))
        f = nn.Dense(D)(nn.relu(nn.Dense(FF)(x)))
        return nn.LayerNorm()(x + nn.Dropout(0.1, deterministic=True)(f))


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        for _ in range(LAYERS):
            x = EncoderLayer()(x)
        return x


def get_inputs(key):
    return [jax.random.normal(key, (B, S, D))]
