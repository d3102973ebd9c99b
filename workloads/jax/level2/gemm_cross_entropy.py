# Classifier head: Linear to logits, then mean cross-entropy (log_softmax + take_along_axis).
# counterpart: workloads/level2/gemm_cross_entropy.py (counts differ by design: docs/jax.md, "Twins")
import jax
import jax.numpy as jnp
from flax import linen as nn

B, K, C = 128, 2048, 32000


class Model(nn.Module):
    @nn.compact
    def __call__(self, x, targets):
        logits = nn.Dense(C, use_bias=False)(x)
        logp = jax.nn.log_softmax(logits, axis=-1)
        picked = jnp.take_along_axis(logp, targets[:, None], axis=-1)[:, 0]
        return -jnp.mean(picked)


def get_inputs(key):
    kx, kt = jax.random.split(key)
    return [jax.random.normal(kx, (B, K)), jax.random.randint(kt, (B,), 0, C)]
