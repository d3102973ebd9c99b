# Elementwise select torch.where(mask, x, y) with a boolean mask input.
import torch
import torch.nn as nn

batch_size = 4096
dim = 65536


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, mask, x, y):
        return torch.where(mask, x, y)


def get_inputs():
    mask = torch.rand(batch_size, dim) > 0.5
    return [mask, torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
