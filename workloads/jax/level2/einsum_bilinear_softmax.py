# Bilinear form via a three-operand einsum ("bi,oij,bj->bo"), plus bias, then softmax.
# counterpart: workloads/level2/einsum_bilinear_softmax.py (counts differ by design: docs/jax.md, "Twins")
import jax
import jax.numpy as jnp

B, I1, I2, O = 128, 512, 512, 256


def init_params(key):
    return {
        "weight": jax.random.normal(key, (O, I1, I2)) * 0.01,
        "bias": jnp.zeros((O,)),
    }


def forward(params, x1, x2):
    y = jnp.einsum("bi,oij,bj->bo", x1, params["weight"], x2) + params["bias"]
    return jax.nn.softmax(y, axis=-1)


def get_inputs(key):
    k1, k2 = jax.random.split(key)
    return [jax.random.normal(k1, (B, I1)), jax.random.normal(k2, (B, I2))]
