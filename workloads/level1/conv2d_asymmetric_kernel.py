# 2-D convolution with a non-square 3x7 kernel, asymmetric padding and a non-square input.
import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 128
kernel_h = 3
kernel_w = 7
height = 256
width = 512


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_h, kernel_w):
        super().__init__()
        self.conv = nn.Conv2d(
            in_channels, out_channels, (kernel_h, kernel_w), padding=(kernel_h // 2, kernel_w // 2)
        )

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_h, kernel_w]
