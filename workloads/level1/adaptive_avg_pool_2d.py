# Adaptive 2-D average pooling to a 7x7 output (non-divisible input 54x54).
import torch
import torch.nn as nn

batch_size = 128
channels = 512
height = 54
width = 54


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d((7, 7))

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.rand(batch_size, channels, height, width)]


def get_init_inputs():
    return []
