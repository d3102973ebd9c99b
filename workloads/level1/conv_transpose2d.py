# Transposed 2-D convolution (3x3, stride 2, padding 1, output_padding 1) doubling 64x64 maps.
import torch
import torch.nn as nn

batch_size = 32
in_channels = 256
out_channels = 128
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
height = 64
width = 64


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(
            in_channels,
            out_channels,
            kernel_size,
            stride=stride,
            padding=padding,
            output_padding=output_padding,
        )

    def forward(self, x):
        return self.deconv(x)


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding]
