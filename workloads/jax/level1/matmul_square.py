# Square matrix multiplication C = A @ B (4096 x 4096 by 4096 x 4096).
# twin: workloads/level1/matmul_square.py
import jax
import jax.numpy as jnp

N = 4096


def forward(a, b):
    return jnp.matmul(a, b)


def get_inputs(key):
    k1, k2 = jax.random.split(key)
    return [jax.random.uniform(k1, (N, N)), jax.random.uniform(k2, (N, N))]
