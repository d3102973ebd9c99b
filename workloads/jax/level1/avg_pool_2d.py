# 2-D average pooling (3x3, stride 1, padding 1, padding counted) on NCHW maps.
# twin: workloads/level1/avg_pool_2d.py
import jax
import jax.numpy as jnp

N, C, H, W = 32, 128, 224, 224
K, S, P = 3, 1, 1


def forward(x):
    total = jax.lax.reduce_window(
        x,
        0.0,
        jax.lax.add,
        window_dimensions=(1, 1, K, K),
        window_strides=(1, 1, S, S),
        padding=((0, 0), (0, 0), (P, P), (P, P)),
    )
    return total / (K * K)


def get_inputs(key):
    return [jax.random.uniform(key, (N, C, H, W))]
