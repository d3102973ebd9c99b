# Grouped, dilated transposed 2-D convolution (4 groups, 3x3, dilation 2, no bias).
import torch
import torch.nn as nn

batch_size = 16
in_channels = 128
out_channels = 128
kernel_size = 3
groups = 4
dilation = 2
height = 96
width = 96


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, groups, dilation):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(
            in_channels,
            out_channels,
            kernel_size,
            groups=groups,
            dilation=dilation,
            bias=False,
        )

    def forward(self, x):
        return self.deconv(x)


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, groups, dilation]
