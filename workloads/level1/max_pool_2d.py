# 2-D max pooling (3x3, stride 2, padding 1) as in a ResNet stem.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
channels = 64
height = 224
width = 224


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.max_pool2d(x, kernel_size=3, stride=2, padding=1)


def get_inputs():
    return [torch.rand(batch_size, channels, height, width)]


def get_init_inputs():
    return []
