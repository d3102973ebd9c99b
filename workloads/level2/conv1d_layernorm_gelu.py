# Conv1d over a sequence (channels-first), transpose, LayerNorm over channels, then GELU.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 512
out_channels = 1024
length = 2048
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=1)
        self.norm = nn.LayerNorm(out_channels)

    def forward(self, x):
        x = self.conv(x).transpose(1, 2)
        return F.gelu(self.norm(x))


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
