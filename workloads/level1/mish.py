# Mish activation via F.mish (x * tanh(softplus(x))).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
dim = 65536


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.mish(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
