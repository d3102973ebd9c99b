# 2-D average pooling (3x3, stride 1, padding 1, count_include_pad) via nn.AvgPool2d.
import torch
import torch.nn as nn

batch_size = 32
channels = 128
height = 224
width = 224


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size=3, stride=1, padding=1)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.rand(batch_size, channels, height, width)]


def get_init_inputs():
    return []
