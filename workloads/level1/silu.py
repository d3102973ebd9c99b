# SiLU activation via nn.SiLU.
import torch
import torch.nn as nn

batch_size = 4096
dim = 65536


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
