# 1-D average pooling (kernel 8, stride 4) via nn.AvgPool1d.
import torch
import torch.nn as nn

batch_size = 64
channels = 128
length = 65536


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool1d(kernel_size=8, stride=4)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.rand(batch_size, channels, length)]


def get_init_inputs():
    return []
