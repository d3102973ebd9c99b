# 1-D convolution with stride 2, dilation 4 and padding, no bias.
import torch
import torch.nn as nn

batch_size = 16
in_channels = 128
out_channels = 256
kernel_size = 5
stride = 2
dilation = 4
padding = 8
length = 32768


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, dilation, padding):
        super().__init__()
        self.conv = nn.Conv1d(
            in_channels,
            out_channels,
            kernel_size,
            stride=stride,
            dilation=dilation,
            padding=padding,
            bias=False,
        )

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, dilation, padding]
