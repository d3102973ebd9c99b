# Embedding lookup (jnp.take of token ids from a table), mean pooling over the sequence, then a Linear.
import jax
import jax.numpy as jnp

B, S, V, D, N = 16, 128, 8192, 256, 64


def init_params(key):
    ke, kw = jax.random.split(key)
    return {
        "table": jax.random.normal(ke, (V, D)) * 0.02,
        "w": jax.random.normal(kw, (D, N)) / D**0.5,
    }


def forward(params, ids):
    emb = jnp.take(params["table"], ids, axis=0)  # [B, S, D]
    pooled = jnp.mean(emb, axis=1)
    return pooled @ params["w"]


def get_inputs(key):
    return [jax.random.randint(key, (B, S), 0, V)]
