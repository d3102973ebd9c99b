# Conv3d over a video volume, GroupNorm, then mean over all non-batch dimensions.
import torch
import torch.nn as nn

batch_size = 16
in_channels = 3
out_channels = 64
depth = 16
height = 112
width = 112
kernel_size = 3
num_groups = 8


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, num_groups):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=1)
        self.gn = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        x = self.gn(self.conv(x))
        return x.mean(dim=[1, 2, 3, 4])


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, num_groups]
