# Dilated Conv2d (dilation 2), SELU, then a sum over the spatial dimensions.
import torch
import torch.nn as nn

batch_size = 32
in_channels = 128
out_channels = 128
height = 56
width = 56
kernel_size = 3
dilation = 2


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, dilation):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=dilation, dilation=dilation)
        self.act = nn.SELU()

    def forward(self, x):
        x = self.act(self.conv(x))
        return x.sum(dim=(2, 3))


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, dilation]
