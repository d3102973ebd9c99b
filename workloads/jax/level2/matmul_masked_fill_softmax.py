# Scores = Q K^T scaled, padding mask (boolean input) applied with jnp.where, softmax, then P V.
# counterpart: workloads/level2/matmul_masked_fill_softmax.py (counts differ by design: docs/jax.md, "Twins")
import jax
import jax.numpy as jnp

B, H, S, D = 16, 16, 512, 64


def forward(q, k, v, key_padding_mask):
    scores = jnp.matmul(q, jnp.swapaxes(k, -2, -1)) * D**-0.5
    mask = key_padding_mask[:, None, None, :]
    scores = jnp.where(mask, -jnp.inf, scores)
    probs = jax.nn.softmax(scores, axis=-1)
    return jnp.matmul(probs, v)


def get_inputs(key):
    kq, kk, kv, km = jax.random.split(key, 4)
    return [
        jax.random.normal(kq, (B, H, S, D)),
        jax.random.normal(kk, (B, H, S, D)),
        jax.random.normal(kv, (B, H, S, D)),
        jax.random.uniform(km, (B, S)) > 0.9,
    ]
