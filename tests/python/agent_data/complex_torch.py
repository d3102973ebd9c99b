# torch.complex has no lowering and a complex result the IR cannot hold.
import torch
import torch.nn as nn

N = 8
D = 16


class Model(nn.Module):
    def forward(self, x):
        return torch.view_as_real(torch.complex(x, x))


def get_inputs():
    return [torch.randn(N, D)]


def get_init_inputs():
    return []
