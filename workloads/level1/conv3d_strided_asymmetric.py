# Strided 3-D convolution with a (3, 5, 5) kernel, stride (1, 2, 2), no bias.
import torch
import torch.nn as nn

batch_size = 16
in_channels = 16
out_channels = 64
kernel_size = (3, 5, 5)
stride = (1, 2, 2)
padding = (1, 2, 2)
depth = 16
height = 224
width = 224


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv = nn.Conv3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding, bias=False
        )

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]
