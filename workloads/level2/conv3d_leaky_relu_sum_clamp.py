# Conv3d, LeakyReLU, add a learned per-channel bias, sum over depth, then clamp.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
in_channels = 16
out_channels = 64
depth = 16
height = 64
width = 64
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=1)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1, 1) * 0.02)

    def forward(self, x):
        x = F.leaky_relu(self.conv(x), negative_slope=0.01)
        x = x + self.bias
        x = torch.sum(x, dim=2)
        return torch.clamp(x, min=0.0, max=10.0)


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
