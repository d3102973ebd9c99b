# Masked cumulative sum: cumsum of x * mask along dimension 1 with a boolean mask.
import torch
import torch.nn as nn

batch_size = 8192
seq_len = 32768
scan_dim = 1


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x, mask):
        return torch.cumsum(x * mask, dim=self.dim)


def get_inputs():
    x = torch.rand(batch_size, seq_len)
    mask = torch.rand(batch_size, seq_len) > 0.5
    return [x, mask]


def get_init_inputs():
    return [scan_dim]
