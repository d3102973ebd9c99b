# Adaptive 1-D average pooling of a long sequence to 128 bins via F.adaptive_avg_pool1d.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
channels = 128
length = 50000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.adaptive_avg_pool1d(x, 128)


def get_inputs():
    return [torch.rand(batch_size, channels, length)]


def get_init_inputs():
    return []
