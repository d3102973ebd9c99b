# 2-D convolution (64 -> 128 channels, 3x3, no padding, with bias) on 224x224 NCHW maps.
# twin: workloads/level1/conv2d_standard.py
import jax
import jax.numpy as jnp

N, CIN, COUT, K, H, W = 16, 64, 128, 3, 224, 224


def init_params(key):
    k1, k2 = jax.random.split(key)
    bound = 1.0 / (CIN * K * K) ** 0.5
    return {
        "w": jax.random.uniform(k1, (COUT, CIN, K, K), minval=-bound, maxval=bound),
        "b": jax.random.uniform(k2, (COUT,), minval=-bound, maxval=bound),
    }


def forward(params, x):
    y = jax.lax.conv_general_dilated(
        x,
        params["w"],
        window_strides=(1, 1),
        padding=((0, 0), (0, 0)),
        dimension_numbers=("NCHW", "OIHW", "NCHW"),
    )
    return y + params["b"][None, :, None, None]


def get_inputs(key):
    return [jax.random.uniform(key, (N, CIN, H, W))]
