# Per-row sum, mean and maximum of a 2-D array.
import numpy as np

N = 512
D = 256


def get_inputs(rng):
    return [rng.standard_normal((N, D)).astype(np.float32)]


def forward(x):
    return x.sum(axis=1), x.mean(axis=1), x.max(axis=1)
