# ViT front end + one encoder block (patch embedding, cls token, pre-LN attention, GELU MLP, head).
# counterpart: workloads/level3/vit_block.py (counts differ by design: docs/jax.md, "Twins")
# ViT front end + one encoder block: conv patch embedding (stride=patch), cls token, position
# embedding, pre-LN multi-head attention (no mask), GELU MLP, final LayerNorm and class head.
import jax
import jax.numpy as jnp
from flax import linen as nn

B, IMG, PATCH, CIN, E, NH, MLP_RATIO, NUM_CLASSES = 32, 224, 16, 3, 768, 12, 4, 1000


class Model(nn.Module):
    @nn.compact
    def __call__(self, img):
        n = (IMG // PATCH) ** 2
        hd = E // NH
        x = nn.Conv(E, (PATCH, PATCH), (PATCH, PATCH), padding="VALID", name="patch_embed")(img)
        x = x.reshape(B, n, E)
        cls = self.param("cls_token", nn.initializers.zeros, (1, 1, E))
        pos = self.param("pos_embed", nn.initializers.normal(0.02), (1, n + 1, E))
        x = jnp.concatenate([jnp.broadcast_to(cls, (B, 1, E)), x], axis=1) + pos
        h = nn.LayerNorm(epsilon=1e-5, name="norm1")(x)
        qkv = nn.Dense(3 * E, name="qkv")(h).reshape(B, n + 1, 3, NH, hd).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = jax.nn.softmax((q @ k.transpose(0, 1, 3, 2)) * hd**-0.5, axis=-1)
        a = (attn @ v).transpose(0, 2, 1, 3).reshape(B, n + 1, E)
        x = x + nn.Dense(E, name="proj")(a)
        h = nn.LayerNorm(epsilon=1e-5, name="norm2")(x)
        x = x + nn.Dense(E, name="fc2")(nn.gelu(nn.Dense(MLP_RATIO * E, name="fc1")(h), approximate=False))
        x = nn.LayerNorm(epsilon=1e-5, name="norm")(x)
        return nn.Dense(NUM_CLASSES, name="head")(x[:, 0])


def get_inputs(key):
    return [jax.random.uniform(key, (B, IMG, IMG, CIN))]
