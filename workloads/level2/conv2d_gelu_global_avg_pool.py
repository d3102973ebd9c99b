# Conv2d, GELU, then global average pooling to a [batch, channels] feature vector.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
in_channels = 3
out_channels = 96
height = 224
width = 224
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        x = F.gelu(self.conv(x))
        x = F.adaptive_avg_pool2d(x, 1)
        return x.squeeze(-1).squeeze(-1)


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
