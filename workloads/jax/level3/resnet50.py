# ResNet-50 (Flax linen, NHWC): 7x7 stem + max-pool, bottleneck blocks (3,4,6,3; expansion 4),
# inference-mode BatchNorm, global average pool and a classifier; 64x64 images, batch 2.
import jax
import jax.numpy as jnp
from flax import linen as nn

B, IMG, WIDTH, NUM_CLASSES = 2, 64, 64, 1000
EXPANSION = 4


class Bottleneck(nn.Module):
    features: int
    strides: int

    @nn.compact
    def __call__(self, x):
        bn = lambda: nn.BatchNorm(use_running_average=True)
        out = self.features * EXPANSION
        y = nn.relu(bn()(nn.Conv(self.features, (1, 1), use_bias=False)(x)))
        y = nn.Conv(self.features, (3, 3), (self.strides, self.strides), padding=1, use_bias=False)(y)
        y = nn.relu(bn()(y))
        y = bn()(nn.Conv(out, (1, 1), use_bias=False)(y))
        if self.strides != 1 or x.shape[-1] != out:
            x = bn()(nn.Conv(out, (1, 1), (self.strides, self.strides), use_bias=False)(x))
        return nn.relu(x + y)


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Conv(WIDTH, (7, 7), (2, 2), padding=3, use_bias=False)(x)
        x = nn.relu(nn.BatchNorm(use_running_average=True)(x))
        x = nn.max_pool(x, (3, 3), strides=(2, 2), padding=((1, 1), (1, 1)))
        for stage, blocks in enumerate((3, 4, 6, 3)):
            for i in range(blocks):
                strides = 2 if stage > 0 and i == 0 else 1
                x = Bottleneck(WIDTH * 2**stage, strides)(x)
        x = jnp.mean(x, axis=(1, 2))
        return nn.Dense(NUM_CLASSES)(x)


def get_inputs(key):
    return [jax.random.normal(key, (B, IMG, IMG, 3))]
