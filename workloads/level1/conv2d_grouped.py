# Grouped 2-D convolution (8 groups, 3x3, padding 1) as in ResNeXt blocks.
import torch
import torch.nn as nn

batch_size = 32
in_channels = 256
out_channels = 512
kernel_size = 3
groups = 8
height = 56
width = 56


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, groups):
        super().__init__()
        self.conv = nn.Conv2d(
            in_channels, out_channels, kernel_size, padding=kernel_size // 2, groups=groups
        )

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, groups]
