# Depthwise 2-D convolution (groups == channels, 3x3, padding 1, no bias).
import torch
import torch.nn as nn

batch_size = 64
channels = 256
kernel_size = 3
height = 112
width = 112


class Model(nn.Module):
    def __init__(self, channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(
            channels, channels, kernel_size, padding=kernel_size // 2, groups=channels, bias=False
        )

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, kernel_size]
