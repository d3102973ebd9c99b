# SiLU (swish) activation: x * sigmoid(x).
import numpy as np

N = 512
D = 256


def get_inputs(rng):
    return [rng.standard_normal((N, D)).astype(np.float32)]


def forward(x):
    return x / (1.0 + np.exp(-x))
