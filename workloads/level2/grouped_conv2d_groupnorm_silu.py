# Grouped Conv2d (8 groups), GroupNorm, then SiLU.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 256
out_channels = 256
height = 56
width = 56
kernel_size = 3
groups = 8
num_groups = 32


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, groups, num_groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1, groups=groups)
        self.gn = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        return F.silu(self.gn(self.conv(x)))


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, groups, num_groups]
