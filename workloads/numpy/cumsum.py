# Inclusive cumulative sum along the last axis.
import numpy as np

N = 128
D = 512


def get_inputs(rng):
    return [rng.standard_normal((N, D)).astype(np.float32)]


def forward(x):
    return np.cumsum(x, axis=1)
