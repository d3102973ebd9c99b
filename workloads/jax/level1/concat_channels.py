# Concatenation of three NCHW feature maps along the channel axis.
# twin: workloads/level1/concat_channels.py
import jax
import jax.numpy as jnp

N, CA, CB, CC, H, W = 32, 128, 256, 64, 112, 112


def forward(a, b, c):
    return jnp.concatenate([a, b, c], axis=1)


def get_inputs(key):
    ka, kb, kc = jax.random.split(key, 3)
    return [
        jax.random.uniform(ka, (N, CA, H, W)),
        jax.random.uniform(kb, (N, CB, H, W)),
        jax.random.uniform(kc, (N, CC, H, W)),
    ]
