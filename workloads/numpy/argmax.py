# Index of the largest element of every row (int64 output).
import numpy as np

N = 512
D = 256


def get_inputs(rng):
    return [rng.standard_normal((N, D)).astype(np.float32)]


def forward(x):
    return np.argmax(x, axis=1)
