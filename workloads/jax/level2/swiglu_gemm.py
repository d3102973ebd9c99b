# SwiGLU feed-forward: gate and up projections, SiLU(gate) * up, then down projection.
# twin: workloads/level2/swiglu_gemm.py
import jax
from flax import linen as nn

B, S, H, I = 8, 2048, 2048, 5632


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        gate = nn.Dense(I, use_bias=False, name="gate")(x)
        up = nn.Dense(I, use_bias=False, name="up")(x)
        return nn.Dense(H, use_bias=False, name="down")(jax.nn.silu(gate) * up)


def get_inputs(key):
    return [jax.random.normal(key, (B, S, H))]
