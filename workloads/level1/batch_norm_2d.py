# 2-D batch normalization nn.BatchNorm2d (training mode: batch statistics).
import torch
import torch.nn as nn

batch_size = 64
num_features = 128
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, num_features):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features)

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    return [torch.randn(batch_size, num_features, height, width)]


def get_init_inputs():
    return [num_features]
