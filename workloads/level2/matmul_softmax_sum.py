# Batched matmul of two inputs, softmax over the last dim, then sum over the middle dim.
import torch
import torch.nn as nn

batch_size = 32
m = 1024
k = 512
n = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        c = torch.matmul(a, b)
        p = torch.softmax(c, dim=-1)
        return p.sum(dim=1)


def get_inputs():
    return [torch.randn(batch_size, m, k), torch.randn(batch_size, k, n)]


def get_init_inputs():
    return []
