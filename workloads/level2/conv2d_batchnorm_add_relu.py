# Conv2d + BatchNorm2d, add an identity input (residual), then in-place ReLU.
import torch
import torch.nn as nn

batch_size = 64
channels = 128
height = 56
width = 56


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x, identity):
        out = self.bn(self.conv(x))
        out += identity
        return self.relu(out)


def get_inputs():
    return [torch.rand(batch_size, channels, height, width), torch.rand(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
