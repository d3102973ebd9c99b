# Attention-score style: bmm(Q, K^T), divide by sqrt(d), softmax, bmm with V.
# twin: workloads/level2/bmm_div_softmax.py
import math

import jax
import jax.numpy as jnp

BH, S, D = 128, 1024, 64


def forward(q, k, v):
    scores = jnp.matmul(q, jnp.swapaxes(k, 1, 2)) / math.sqrt(D)
    probs = jax.nn.softmax(scores, axis=-1)
    return jnp.matmul(probs, v)


def get_inputs(key):
    kq, kk, kv = jax.random.split(key, 3)
    return [
        jax.random.normal(kq, (BH, S, D)),
        jax.random.normal(kk, (BH, S, D)),
        jax.random.normal(kv, (BH, S, D)),
    ]
