# Elementwise addition broadcasting a per-channel [1, C, 1, 1] tensor onto [N, C, H, W].
# twin: workloads/level1/broadcast_add.py
import jax
import jax.numpy as jnp

N, C, H, W = 64, 256, 128, 128


def forward(x, bias):
    return x + bias


def get_inputs(key):
    k1, k2 = jax.random.split(key)
    return [jax.random.uniform(k1, (N, C, H, W)), jax.random.uniform(k2, (1, C, 1, 1))]
