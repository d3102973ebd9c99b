# Clamp every element into [min_val, max_val] via torch.clamp.
import torch
import torch.nn as nn

batch_size = 4096
dim = 65536


class Model(nn.Module):
    def __init__(self, min_val, max_val):
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val

    def forward(self, x):
        return torch.clamp(x, min=self.min_val, max=self.max_val)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [-0.5, 0.5]
