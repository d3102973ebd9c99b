# ConvTranspose3d with stride 2, BatchNorm3d, then AvgPool3d.
import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 32
depth = 16
height = 32
width = 32
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.deconv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=2, padding=1, output_padding=1)
        self.bn = nn.BatchNorm3d(out_channels)
        self.pool = nn.AvgPool3d(kernel_size=2)

    def forward(self, x):
        return self.pool(self.bn(self.deconv(x)))


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
