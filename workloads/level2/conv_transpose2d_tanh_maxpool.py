# Strided ConvTranspose2d (2x upsampling), Tanh, then 2x2 max pooling.
import torch
import torch.nn as nn

batch_size = 32
in_channels = 256
out_channels = 128
height = 56
width = 56
kernel_size = 4
stride = 2
padding = 1


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)

    def forward(self, x):
        x = torch.tanh(self.deconv(x))
        return self.pool(x)


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]
