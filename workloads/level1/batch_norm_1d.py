# 1-D batch normalization nn.BatchNorm1d over [batch, features] (training mode).
import torch
import torch.nn as nn

batch_size = 16384
num_features = 8192


class Model(nn.Module):
    def __init__(self, num_features):
        super().__init__()
        self.bn = nn.BatchNorm1d(num_features)

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    return [torch.randn(batch_size, num_features)]


def get_init_inputs():
    return [num_features]
