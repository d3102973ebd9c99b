# Softmax over a non-last dimension (channels, dim=1) of a 4-D [N, C, H, W] tensor.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
channels = 512
height = 128
width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
