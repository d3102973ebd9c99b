# Two-layer MLP written with flax.nnx: Linear, ReLU, Linear.
import jax
from flax import nnx

B, DIN, DHID, DOUT = 64, 512, 1024, 256


class Model(nnx.Module):
    def __init__(self, din, dhid, dout, *, rngs: nnx.Rngs):
        self.fc1 = nnx.Linear(din, dhid, rngs=rngs)
        self.fc2 = nnx.Linear(dhid, dout, rngs=rngs)

    def __call__(self, x):
        return self.fc2(nnx.relu(self.fc1(x)))


def get_init_inputs():
    return [DIN, DHID, DOUT]


def get_inputs(key):
    return [jax.random.normal(key, (B, DIN))]
