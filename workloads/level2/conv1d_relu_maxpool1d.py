# Conv1d over a long signal, ReLU, then MaxPool1d with stride 2.
import torch
import torch.nn as nn

batch_size = 64
in_channels = 128
out_channels = 256
length = 8192
kernel_size = 5


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.pool = nn.MaxPool1d(kernel_size=3, stride=2, padding=1)

    def forward(self, x):
        return self.pool(torch.relu(self.conv(x)))


def get_inputs():
    return [torch.rand(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
