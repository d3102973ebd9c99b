# Dilated 2-D max pooling (2x2 window, stride 2, dilation 2) via nn.MaxPool2d.
import torch
import torch.nn as nn

batch_size = 32
channels = 128
height = 256
width = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2, dilation=2)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.rand(batch_size, channels, height, width)]


def get_init_inputs():
    return []
