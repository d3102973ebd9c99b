# Matmul with a weight parameter, hand-written RMS norm with a learned gain, then SiLU.
# twin: workloads/level2/matmul_rmsnorm_silu.py
import jax
import jax.numpy as jnp

B, S, K, N = 16, 1024, 2048, 2048
EPS = 1e-6


def init_params(key):
    return {
        "weight": jax.random.normal(key, (K, N)) * 0.02,
        "gain": jnp.ones((N,)),
    }


def forward(params, x):
    y = jnp.matmul(x, params["weight"])
    rms = jax.lax.rsqrt(jnp.mean(y**2, axis=-1, keepdims=True) + EPS)
    y = y * rms * params["gain"]
    return jax.nn.silu(y)


def get_inputs(key):
    return [jax.random.normal(key, (B, S, K))]
