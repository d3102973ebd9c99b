# Conv2d 3x3 followed by BatchNorm2d (training-mode statistics) and ReLU.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
in_channels = 64
out_channels = 128
height = 112
width = 112
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
