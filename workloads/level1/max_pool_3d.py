# 3-D max pooling (2x2x2, stride 2) via nn.MaxPool3d on a volume.
import torch
import torch.nn as nn

batch_size = 16
channels = 32
depth = 64
height = 128
width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool3d(kernel_size=2, stride=2)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.rand(batch_size, channels, depth, height, width)]


def get_init_inputs():
    return []
