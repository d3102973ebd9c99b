# 1-D convolution nn.Conv1d(64 -> 128, kernel 3) over long sequences.
import torch
import torch.nn as nn

batch_size = 32
in_channels = 64
out_channels = 128
kernel_size = 3
length = 65536


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
