# Embedding lookup jnp.take(table, ids, axis=0): table [V, D], int32 token ids [B, S].
import jax
import jax.numpy as jnp

V, D, B, S = 8192, 256, 8, 128


def init_params(key):
    return {"table": jax.random.normal(key, (V, D))}


def forward(params, ids):
    return jnp.take(params["table"], ids, axis=0)


def get_inputs(key):
    return [jax.random.randint(key, (B, S), 0, V)]
