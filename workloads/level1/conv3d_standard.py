# 3-D convolution nn.Conv3d(32 -> 64, 3x3x3, padding 1) on volumetric data.
import torch
import torch.nn as nn

batch_size = 8
in_channels = 32
out_channels = 64
kernel_size = 3
depth = 64
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=1)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
