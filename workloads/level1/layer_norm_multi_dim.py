# Layer normalization over the last three dimensions (C, H, W) of an image batch.
import torch
import torch.nn as nn

batch_size = 32
channels = 64
height = 224
width = 224


class Model(nn.Module):
    def __init__(self, channels, height, width):
        super().__init__()
        self.ln = nn.LayerNorm((channels, height, width))

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, height, width]
