# 2-D convolution nn.Conv2d(64 -> 128, 3x3, no padding) on 224x224 feature maps.
import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 128
kernel_size = 3
height = 224
width = 224


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
