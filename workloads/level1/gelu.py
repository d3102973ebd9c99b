# GELU activation (exact erf form) via nn.GELU on a 4-D [batch, channels, H, W] tensor.
import torch
import torch.nn as nn

batch_size = 64
channels = 256
height = 128
width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.GELU()

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
