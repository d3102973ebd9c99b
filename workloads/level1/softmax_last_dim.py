# Softmax over the last dimension of a [batch, dim] tensor.
import torch
import torch.nn as nn

batch_size = 4096
dim = 65536


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
