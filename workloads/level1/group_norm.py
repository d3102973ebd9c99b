# Group normalization nn.GroupNorm(32 groups, 256 channels) on a 4-D feature map.
import torch
import torch.nn as nn

batch_size = 32
num_groups = 32
num_channels = 256
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, num_groups, num_channels):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, num_channels)

    def forward(self, x):
        return self.gn(x)


def get_inputs():
    return [torch.randn(batch_size, num_channels, height, width)]


def get_init_inputs():
    return [num_groups, num_channels]
