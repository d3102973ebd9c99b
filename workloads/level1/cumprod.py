# Cumulative product along dimension 1 via torch.cumprod.
import torch
import torch.nn as nn

batch_size = 8192
seq_len = 32768
scan_dim = 1


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.cumprod(x, dim=self.dim)


def get_inputs():
    return [torch.rand(batch_size, seq_len)]


def get_init_inputs():
    return [scan_dim]
