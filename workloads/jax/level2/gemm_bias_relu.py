# GEMM with an explicit bias parameter, then ReLU.
import jax
import jax.numpy as jnp

B, K, N = 128, 512, 1024


def init_params(key):
    kw, kb = jax.random.split(key)
    return {
        "w": jax.random.normal(kw, (K, N)) / K**0.5,
        "b": jax.random.normal(kb, (N,)),
    }


def forward(params, x):
    return jax.nn.relu(x @ params["w"] + params["b"])


def get_inputs(key):
    return [jax.random.normal(key, (B, K))]
