# Instance normalization nn.InstanceNorm2d (per-sample, per-channel statistics).
import torch
import torch.nn as nn

batch_size = 32
num_features = 128
height = 256
width = 256


class Model(nn.Module):
    def __init__(self, num_features):
        super().__init__()
        self.norm = nn.InstanceNorm2d(num_features)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, num_features, height, width)]


def get_init_inputs():
    return [num_features]
