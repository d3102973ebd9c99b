# Layer normalisation over the last axis with a learned scale and shift.
import numpy as np

N = 512
D = 256
EPS = 1e-5


def get_inputs(rng):
    return [rng.standard_normal((N, D)).astype(np.float32),
            rng.standard_normal((D,)).astype(np.float32),
            rng.standard_normal((D,)).astype(np.float32)]


def forward(x, gamma, beta):
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * gamma + beta
