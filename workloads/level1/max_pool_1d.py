# 1-D max pooling (kernel 4, stride 2, padding 1) via nn.MaxPool1d.
import torch
import torch.nn as nn

batch_size = 64
channels = 128
length = 65536
kernel_size = 4
stride = 2
padding = 1


class Model(nn.Module):
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.rand(batch_size, channels, length)]


def get_init_inputs():
    return [kernel_size, stride, padding]
