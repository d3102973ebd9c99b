# im2col patch extraction with F.unfold (3x3 kernel, padding 1, stride 1).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
channels = 64
height = 112
width = 112
kernel_size = 3


class Model(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.kernel_size = kernel_size

    def forward(self, x):
        return F.unfold(x, kernel_size=self.kernel_size, padding=self.kernel_size // 2, stride=1)


def get_inputs():
    return [torch.rand(batch_size, channels, height, width)]


def get_init_inputs():
    return [kernel_size]
