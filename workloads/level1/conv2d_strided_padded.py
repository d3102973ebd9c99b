# Strided, padded 2-D convolution (3x3, stride 2, padding 1) halving the spatial size.
import torch
import torch.nn as nn

batch_size = 32
in_channels = 128
out_channels = 256
kernel_size = 3
stride = 2
padding = 1
height = 112
width = 112


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv = nn.Conv2d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding
        )

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]
