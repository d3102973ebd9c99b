# Pointwise 1x1 2-D convolution expanding channels 256 -> 1024.
import torch
import torch.nn as nn

batch_size = 64
in_channels = 256
out_channels = 1024
height = 56
width = 56


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=1)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
