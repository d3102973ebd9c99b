# Log-softmax over a non-last dimension (dim=0) via nn.LogSoftmax.
import torch
import torch.nn as nn

rows = 16384
cols = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_softmax = nn.LogSoftmax(dim=0)

    def forward(self, x):
        return self.log_softmax(x)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
