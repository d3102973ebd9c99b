# Cast of a float32 [B, D] tensor to bfloat16 (convert_element_type).
import jax
import jax.numpy as jnp

B, D = 256, 4096


def forward(x):
    return x.astype(jnp.bfloat16)


def get_inputs(key):
    return [jax.random.normal(key, (B, D))]
