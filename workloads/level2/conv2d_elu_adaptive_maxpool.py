# Strided Conv2d, ELU, then adaptive max pooling to a fixed 7x7 grid.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
in_channels = 3
out_channels = 64
height = 224
width = 224
kernel_size = 7


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=2, padding=3)

    def forward(self, x):
        x = F.elu(self.conv(x), alpha=1.0)
        return F.adaptive_max_pool2d(x, (7, 7))


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
