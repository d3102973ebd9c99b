# Bias-free projection x @ w (d_model 4096 -> d_ff 11008) over a [batch, seq, d_model] activation.
# twin: workloads/level1/linear_no_bias.py
import jax
import jax.numpy as jnp

BATCH, SEQ, D_MODEL, D_FF = 16, 1024, 4096, 11008


def init_params(key):
    bound = 1.0 / D_MODEL**0.5
    return {"w": jax.random.uniform(key, (D_MODEL, D_FF), minval=-bound, maxval=bound)}


def forward(params, x):
    return x @ params["w"]


def get_inputs(key):
    return [jax.random.uniform(key, (BATCH, SEQ, D_MODEL))]
