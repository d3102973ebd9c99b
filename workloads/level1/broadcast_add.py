# Elementwise addition with broadcasting of a per-channel [1, C, 1, 1] tensor onto [N, C, H, W].
import torch
import torch.nn as nn

batch_size = 64
channels = 256
height = 128
width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, bias):
        return x + bias


def get_inputs():
    return [torch.rand(batch_size, channels, height, width), torch.rand(1, channels, 1, 1)]


def get_init_inputs():
    return []
