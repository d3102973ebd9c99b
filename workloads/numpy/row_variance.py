# Population variance of every row (ddof = 0).
import numpy as np

N = 512
D = 256


def get_inputs(rng):
    return [rng.standard_normal((N, D)).astype(np.float32)]


def forward(x):
    return x.var(axis=1)
