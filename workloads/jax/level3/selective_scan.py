# Selective scan (Mamba SSM core) with jax.lax.scan over the sequence: carry h [B, D, N],
# per step h = exp(dt*A) * h + dt*B*x, y = (h*C).sum(-1).
import jax
import jax.numpy as jnp

B, L, D, N = 2, 64, 256, 16


def init_params(key):
    a = jnp.broadcast_to(jnp.arange(1, N + 1, dtype=jnp.float32), (D, N))
    return {"A_log": jnp.log(a)}


def forward(params, x, dt, b, c):
    # x, dt: [B, L, D]; b, c: [B, L, N]
    a = -jnp.exp(params["A_log"])  # [D, N]

    def step(h, xs):
        x_t, dt_t, b_t, c_t = xs  # [B, D], [B, D], [B, N], [B, N]
        d_a = jnp.exp(dt_t[:, :, None] * a)
        h = d_a * h + dt_t[:, :, None] * b_t[:, None, :] * x_t[:, :, None]
        return h, (h * c_t[:, None, :]).sum(-1)

    h0 = jnp.zeros((B, D, N), x.dtype)
    xs = tuple(jnp.swapaxes(t, 0, 1) for t in (x, dt, b, c))
    _, ys = jax.lax.scan(step, h0, xs)
    return jnp.swapaxes(ys, 0, 1)  # [B, L, D]


def get_inputs(key):
    kx, kd, kb, kc = jax.random.split(key, 4)
    return [
        jax.random.normal(kx, (B, L, D)),
        jax.nn.softplus(jax.random.normal(kd, (B, L, D))) * 0.1,
        jax.random.normal(kb, (B, L, N)),
        jax.random.normal(kc, (B, L, N)),
    ]
