# Batched matmul of two inputs, softmax over the last dim, then sum over the middle dim.
# twin: workloads/level2/matmul_softmax_sum.py
import jax
import jax.numpy as jnp

BATCH, M, K, N = 32, 1024, 512, 1024


def forward(a, b):
    c = jnp.matmul(a, b)
    p = jax.nn.softmax(c, axis=-1)
    return p.sum(axis=1)


def get_inputs(key):
    ka, kb = jax.random.split(key)
    return [jax.random.normal(ka, (BATCH, M, K)), jax.random.normal(kb, (BATCH, K, N))]
