# WaveNet-style stack: causal dilated Conv1d layers (left padding) with tanh*sigmoid gated units,
# 1x1 residual and skip projections, summed skips, ReLU, 1x1 output convs to logits.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
length = 16384
in_channels = 1
residual_channels = 64
skip_channels = 256
out_channels = 256
dilations = [1, 2, 4, 8, 16, 32, 64, 128]


class GatedResidual(nn.Module):
    def __init__(self, channels, skip_channels, dilation):
        super().__init__()
        self.dilation = dilation
        self.filter = nn.Conv1d(channels, channels, 2, dilation=dilation)
        self.gate = nn.Conv1d(channels, channels, 2, dilation=dilation)
        self.res = nn.Conv1d(channels, channels, 1)
        self.skip = nn.Conv1d(channels, skip_channels, 1)

    def forward(self, x):
        padded = F.pad(x, (self.dilation, 0))
        h = torch.tanh(self.filter(padded)) * torch.sigmoid(self.gate(padded))
        return x + self.res(h), self.skip(h)


class Model(nn.Module):
    def __init__(self, in_channels, residual_channels, skip_channels, out_channels, dilations):
        super().__init__()
        self.input_conv = nn.Conv1d(in_channels, residual_channels, 1)
        self.layers = nn.ModuleList([GatedResidual(residual_channels, skip_channels, d) for d in dilations])
        self.out1 = nn.Conv1d(skip_channels, skip_channels, 1)
        self.out2 = nn.Conv1d(skip_channels, out_channels, 1)

    def forward(self, x):
        x = self.input_conv(x)
        skip_total = None
        for layer in self.layers:
            x, s = layer(x)
            skip_total = s if skip_total is None else skip_total + s
        y = self.out1(F.relu(skip_total))
        return self.out2(F.relu(y))


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, residual_channels, skip_channels, out_channels, dilations]
