# GELU activation with the tanh approximation: F.gelu(x, approximate='tanh').
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
seq_len = 2048
hidden = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x, approximate="tanh")


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return []
