# Fully connected layer with bias followed by ReLU: relu(x @ w + b).
import numpy as np

N = 256
D_IN = 128
D_OUT = 192


def get_inputs(rng):
    return [rng.standard_normal((N, D_IN)).astype(np.float32),
            rng.standard_normal((D_IN, D_OUT)).astype(np.float32),
            rng.standard_normal((D_OUT,)).astype(np.float32)]


def forward(x, w, b):
    return np.maximum(x @ w + b, 0.0)
