# DenseNet dense block: each layer BN-ReLU-1x1 conv-BN-ReLU-3x3 conv, outputs concatenated (growth).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 64
growth_rate = 32
num_layers = 6
bn_size = 4
height = 56
width = 56


class DenseLayer(nn.Module):
    def __init__(self, in_channels, growth_rate, bn_size):
        super().__init__()
        self.norm1 = nn.BatchNorm2d(in_channels)
        self.conv1 = nn.Conv2d(in_channels, bn_size * growth_rate, 1, bias=False)
        self.norm2 = nn.BatchNorm2d(bn_size * growth_rate)
        self.conv2 = nn.Conv2d(bn_size * growth_rate, growth_rate, 3, padding=1, bias=False)

    def forward(self, x):
        x = self.conv1(F.relu(self.norm1(x)))
        return self.conv2(F.relu(self.norm2(x)))


class Model(nn.Module):
    def __init__(self, num_layers, in_channels, growth_rate, bn_size):
        super().__init__()
        self.layers = nn.ModuleList(
            [DenseLayer(in_channels + i * growth_rate, growth_rate, bn_size) for i in range(num_layers)]
        )

    def forward(self, x):
        features = [x]
        for layer in self.layers:
            new = layer(torch.cat(features, dim=1))
            features.append(new)
        return torch.cat(features, dim=1)


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [num_layers, in_channels, growth_rate, bn_size]
