# Strided, padded 2-D convolution (3x3, stride 2, padding 1, with bias) halving the spatial size.
# twin: workloads/level1/conv2d_strided_padded.py
import jax
import jax.numpy as jnp

N, CIN, COUT, K, STRIDE, PAD, H, W = 32, 128, 256, 3, 2, 1, 112, 112


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
        window_strides=(STRIDE, STRIDE),
        padding=((PAD, PAD), (PAD, PAD)),
        dimension_numbers=("NCHW", "OIHW", "NCHW"),
    )
    return y + params["b"][None, :, None, None]


def get_inputs(key):
    return [jax.random.uniform(key, (N, CIN, H, W))]
