# Top-k mixture-of-experts FFN: router logits, jax.lax.top_k (k=2), softmax over the chosen logits,
# every expert computed and combined with one-hot routing weights.
import jax
import jax.numpy as jnp
from flax import linen as nn

B, S, D, E, F, K = 2, 64, 256, 8, 512, 2


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        t = x.reshape(B * S, D)
        logits = nn.Dense(E, use_bias=False, name="router")(t)  # [T, E]
        top_vals, top_idx = jax.lax.top_k(logits, K)  # [T, K]
        gates = jax.nn.softmax(top_vals, axis=-1)
        combine = jnp.sum(jax.nn.one_hot(top_idx, E, dtype=x.dtype) * gates[..., None], axis=1)  # [T, E]
        init = nn.initializers.lecun_normal()
        w1 = self.param("w1", init, (E, D, F))
        w2 = self.param("w2", init, (E, F, D))
        h = nn.gelu(jnp.einsum("td,edf->tef", t, w1))
        y = jnp.einsum("tef,efd->ted", h, w2)
        out = jnp.einsum("ted,te->td", y, combine)
        return out.reshape(B, S, D)


def get_inputs(key):
    return [jax.random.normal(key, (B, S, D))]
