# Transposed 1-D convolution (upsampling x2: kernel 4, stride 2, padding 1).
import torch
import torch.nn as nn

batch_size = 32
in_channels = 256
out_channels = 128
kernel_size = 4
stride = 2
padding = 1
length = 16384


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.deconv = nn.ConvTranspose1d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding
        )

    def forward(self, x):
        return self.deconv(x)


def get_inputs():
    return [torch.rand(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]
