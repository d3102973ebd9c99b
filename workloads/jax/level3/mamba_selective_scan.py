# Mamba-style block with a jax.lax.scan selective scan (carry h [B, D, N]) over SEQ_LEN steps.
# counterpart: workloads/level3/mamba_selective_scan.py (counts differ by design: docs/jax.md, "Twins")
# Mamba-style block: in-projection to x and gate z, causal depthwise conv1d, SiLU, input-dependent
# delta/B/C projections, discretisation dA = exp(delta*A), dBu via a 3-operand einsum, a sequential
# selective scan over SEQ_LEN steps (jax.lax.scan, carry h [B, D, N]), skip term D*u, SiLU(z) gating, out-projection.
import jax
import jax.numpy as jnp
from flax import linen as nn

BATCH = 8
SEQ_LEN = 128
D_MODEL = 1024
D_STATE = 16
EXPAND = 2
D_CONV = 4
DT_RANK = D_MODEL // 16
D_INNER = EXPAND * D_MODEL


def _a_log_init(key, shape):
    return jnp.log(jnp.broadcast_to(jnp.arange(1, shape[1] + 1, dtype=jnp.float32), shape))


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        residual = x
        xz = nn.Dense(2 * D_INNER, use_bias=False, name="in_proj")(nn.LayerNorm(epsilon=1e-5)(x))
        u, z = jnp.split(xz, 2, axis=-1)
        u = nn.Conv(
            D_INNER,
            (D_CONV,),
            padding=((D_CONV - 1, D_CONV - 1),),
            feature_group_count=D_INNER,
            name="conv1d",
        )(u)[:, :SEQ_LEN]
        u = nn.silu(u)
        x_dbl = nn.Dense(DT_RANK + 2 * D_STATE, use_bias=False, name="x_proj")(u)
        dt, b, c = jnp.split(x_dbl, [DT_RANK, DT_RANK + D_STATE], axis=-1)
        delta = jax.nn.softplus(nn.Dense(D_INNER, name="dt_proj")(dt))
        a = -jnp.exp(self.param("A_log", _a_log_init, (D_INNER, D_STATE)))
        d = self.param("D", nn.initializers.ones, (D_INNER,))

        d_a = jnp.exp(jnp.einsum("bld,dn->bldn", delta, a))
        d_bu = jnp.einsum("bld,bln,bld->bldn", delta, b, u)

        def step(h, xs):
            d_a_t, d_bu_t, c_t = xs
            h = d_a_t * h + d_bu_t
            return h, jnp.einsum("bdn,bn->bd", h, c_t)

        h0 = jnp.zeros((x.shape[0], D_INNER, D_STATE), x.dtype)
        time_major = lambda t: jnp.moveaxis(t, 1, 0)
        _, ys = jax.lax.scan(step, h0, (time_major(d_a), time_major(d_bu), time_major(c)))
        y = jnp.moveaxis(ys, 0, 1) + u * d
        y = y * nn.silu(z)
        return nn.Dense(D_MODEL, use_bias=False, name="out_proj")(y) + residual


def get_inputs(key):
    return [jax.random.normal(key, (BATCH, SEQ_LEN, D_MODEL))]
