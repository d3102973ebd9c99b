# GEMM, multiply by a constant scale, residual doubling, clamp, then logsumexp over features.
# counterpart: workloads/level2/gemm_scale_clamp_logsumexp.py (counts differ by design: docs/jax.md, "Twins")
import jax
import jax.numpy as jnp
from flax import linen as nn

B, K, H = 128, 2048, 4096
SCALE, CLAMP_MIN, CLAMP_MAX = 0.5, -8.0, 8.0


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Dense(H)(x)
        x = x * SCALE
        x = x + x
        x = jnp.clip(x, CLAMP_MIN, CLAMP_MAX)
        return jax.nn.logsumexp(x, axis=1, keepdims=True)


def get_inputs(key):
    return [jax.random.uniform(key, (B, K))]
