# Conv2d, HardSwish, then multiplication by a learned per-channel scale and shift.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
in_channels = 32
out_channels = 64
height = 112
width = 112
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.scale = nn.Parameter(torch.ones(out_channels, 1, 1) * 0.5)
        self.shift = nn.Parameter(torch.zeros(1, out_channels, 1, 1))

    def forward(self, x):
        x = F.hardswish(self.conv(x))
        return x * self.scale + self.shift


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
