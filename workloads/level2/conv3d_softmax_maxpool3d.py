# Conv3d, softmax over the channel dimension, then two stacked MaxPool3d layers.
import torch
import torch.nn as nn

batch_size = 16
in_channels = 8
out_channels = 32
depth = 32
height = 64
width = 64
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=1)
        self.pool1 = nn.MaxPool3d(2)
        self.pool2 = nn.MaxPool3d(2)

    def forward(self, x):
        x = self.conv(x)
        x = torch.softmax(x, dim=1)
        return self.pool2(self.pool1(x))


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
