# torch.fft.rfft has no lowering and a complex result the IR cannot hold.
import torch
import torch.nn as nn

N = 8
D = 16


class Model(nn.Module):
    def forward(self, x):
        return torch.fft.rfft(x).abs()


def get_inputs():
    return [torch.randn(N, D)]


def get_init_inputs():
    return []
