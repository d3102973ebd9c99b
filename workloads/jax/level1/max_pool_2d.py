# 2-D max pooling (3x3, stride 2, padding 1) on NCHW maps, as in a ResNet stem.
# twin: workloads/level1/max_pool_2d.py
import jax
import jax.numpy as jnp

N, C, H, W = 64, 64, 224, 224
K, S, P = 3, 2, 1


def forward(x):
    return jax.lax.reduce_window(
        x,
        -jnp.inf,
        jax.lax.max,
        window_dimensions=(1, 1, K, K),
        window_strides=(1, 1, S, S),
        padding=((0, 0), (0, 0), (P, P), (P, P)),
    )


def get_inputs(key):
    return [jax.random.uniform(key, (N, C, H, W))]
