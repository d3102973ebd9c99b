# A fori_loop with a static trip count: x <- tanh(x @ W) applied 4 times.
import jax
import jax.numpy as jnp

B, D = 64, 256
STEPS = 4


def init_params(key):
    return {"w": jax.random.normal(key, (D, D)) / D**0.5}


def forward(params, x):
    w = params["w"]

    def body(i, h):
        return jnp.tanh(h @ w)

    return jax.lax.fori_loop(0, STEPS, body, x)


def get_inputs(key):
    return [jax.random.normal(key, (B, D))]
