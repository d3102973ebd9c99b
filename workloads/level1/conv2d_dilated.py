# Dilated (atrous) 2-D convolution: 3x3 kernel, dilation 2, padding 2 (same-size output).
import torch
import torch.nn as nn

batch_size = 16
in_channels = 256
out_channels = 256
kernel_size = 3
dilation = 2
padding = 2
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, dilation, padding):
        super().__init__()
        self.conv = nn.Conv2d(
            in_channels, out_channels, kernel_size, dilation=dilation, padding=padding
        )

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, dilation, padding]
