# Single-head attention: scores Q K^T / sqrt(d), softmax, weighted sum of V (einsum form).
import jax
import jax.numpy as jnp

B, S, D = 4, 256, 64


def forward(q, k, v):
    scores = jnp.einsum("bqd,bkd->bqk", q, k) / jnp.sqrt(D).astype(q.dtype)
    probs = jax.nn.softmax(scores, axis=-1)
    return jnp.einsum("bqk,bkd->bqd", probs, v)


def get_inputs(key):
    kq, kk, kv = jax.random.split(key, 3)
    return [
        jax.random.normal(kq, (B, S, D)),
        jax.random.normal(kk, (B, S, D)),
        jax.random.normal(kv, (B, S, D)),
    ]
