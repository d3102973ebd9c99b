# Conv2d, 4x4 average pooling, Sigmoid, then a sum over channels and space per sample.
import torch
import torch.nn as nn

batch_size = 128
in_channels = 3
out_channels = 64
height = 224
width = 224
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.pool = nn.AvgPool2d(4)

    def forward(self, x):
        x = torch.sigmoid(self.pool(self.conv(x)))
        return torch.sum(x, dim=[1, 2, 3])


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
