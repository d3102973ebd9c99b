# Matrix-vector product y = A @ x with a 1-D vector operand.
# counterpart: workloads/level1/matmul_matrix_vector.py (counts differ by design: docs/jax.md, "Twins")
import jax
import jax.numpy as jnp

M, K = 16384, 16384


def forward(a, x):
    return jnp.matmul(a, x)


def get_inputs(key):
    k1, k2 = jax.random.split(key)
    return [jax.random.uniform(k1, (M, K)), jax.random.uniform(k2, (K,))]
