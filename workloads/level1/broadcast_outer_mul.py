# Elementwise multiply with two-sided broadcasting: [B, N, 1] * [B, 1, M] (outer product).
import torch
import torch.nn as nn

batch_size = 32
N = 4096
M = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a * b


def get_inputs():
    return [torch.rand(batch_size, N, 1), torch.rand(batch_size, 1, M)]


def get_init_inputs():
    return []
