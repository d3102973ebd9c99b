# Constant (zero) padding of the last two dimensions with F.pad, asymmetric amounts.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
channels = 128
height = 224
width = 224
pad = (1, 2, 3, 4)


class Model(nn.Module):
    def __init__(self, pad):
        super().__init__()
        self.pad = pad

    def forward(self, x):
        return F.pad(x, self.pad, mode="constant", value=0.0)


def get_inputs():
    return [torch.rand(batch_size, channels, height, width)]


def get_init_inputs():
    return [pad]
