# Log-softmax over the last axis (vocabulary) of [batch, seq, vocab] logits.
# twin: workloads/level1/log_softmax_last_dim.py
import jax
import jax.numpy as jnp

B, S, V = 8, 1024, 32000


def forward(x):
    return jax.nn.log_softmax(x, axis=-1)


def get_inputs(key):
    return [jax.random.normal(key, (B, S, V))]
