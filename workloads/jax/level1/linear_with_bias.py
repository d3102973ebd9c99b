# Fully connected layer with bias, x @ w + b, on a [batch, in] input (8192 -> 8192).
# twin: workloads/level1/linear_with_bias.py
import jax
import jax.numpy as jnp

BATCH, IN, OUT = 256, 8192, 8192


def init_params(key):
    k1, k2 = jax.random.split(key)
    bound = 1.0 / IN**0.5
    return {
        "w": jax.random.uniform(k1, (IN, OUT), minval=-bound, maxval=bound),
        "b": jax.random.uniform(k2, (OUT,), minval=-bound, maxval=bound),
    }


def forward(params, x):
    return x @ params["w"] + params["b"]


def get_inputs(key):
    return [jax.random.uniform(key, (BATCH, IN))]
