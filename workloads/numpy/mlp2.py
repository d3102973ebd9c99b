# Two-layer perceptron: relu(x @ w1 + b1) @ w2 + b2.
import numpy as np

N = 256
D_IN = 128
HIDDEN = 256
D_OUT = 64


def get_inputs(rng):
    return [rng.standard_normal((N, D_IN)).astype(np.float32),
            rng.standard_normal((D_IN, HIDDEN)).astype(np.float32),
            rng.standard_normal((HIDDEN,)).astype(np.float32),
            rng.standard_normal((HIDDEN, D_OUT)).astype(np.float32),
            rng.standard_normal((D_OUT,)).astype(np.float32)]


def forward(x, w1, b1, w2, b2):
    h = np.maximum(x @ w1 + b1, 0.0)
    return h @ w2 + b2
