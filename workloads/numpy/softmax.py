# Numerically stable softmax over the last axis of a 2-D array.
import numpy as np

N = 512
D = 256


def get_inputs(rng):
    return [rng.standard_normal((N, D)).astype(np.float32)]


def forward(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
