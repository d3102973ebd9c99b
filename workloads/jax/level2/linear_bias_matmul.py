# The paper's Figure 2 program in JAX: x @ W + b (256 -> 512), then @ D [512, 64]; the twin
# of workloads/level2/linear_bias_matmul.py.
# twin: workloads/level2/linear_bias_matmul.py
import jax
import jax.numpy as jnp

B, S, K, N, E = 2, 128, 256, 512, 64


def init_params(key):
    k1, k2, k3 = jax.random.split(key, 3)
    return {
        "W": jax.random.normal(k1, (K, N)) / K**0.5,
        "b": jax.random.normal(k2, (N,)),
        "D": jax.random.normal(k3, (N, E)),
    }


def forward(params, x):
    y = x @ params["W"] + params["b"]
    return y @ params["D"]


def get_inputs(key):
    return [jax.random.normal(key, (B, S, K))]
