# Adaptive 2-D max pooling to a 6x6 output via nn.AdaptiveMaxPool2d.
import torch
import torch.nn as nn

batch_size = 128
channels = 256
height = 27
width = 27


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AdaptiveMaxPool2d((6, 6))

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.rand(batch_size, channels, height, width)]


def get_init_inputs():
    return []
