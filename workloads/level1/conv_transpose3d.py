# Transposed 3-D convolution (2x2x2 kernel, stride 2) upsampling a volume by 2 in every axis.
import torch
import torch.nn as nn

batch_size = 8
in_channels = 64
out_channels = 32
kernel_size = 2
stride = 2
depth = 32
height = 64
width = 64


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super().__init__()
        self.deconv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride)

    def forward(self, x):
        return self.deconv(x)


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride]
