# Mean squared error between predictions and targets (a 0-d array).
import numpy as np

N = 512
D = 256


def get_inputs(rng):
    return [rng.standard_normal((N, D)).astype(np.float32),
            rng.standard_normal((N, D)).astype(np.float32)]


def forward(pred, target):
    return np.asarray(np.mean((pred - target) ** 2), dtype=np.float32)
