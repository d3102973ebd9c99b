# Hinge loss written by hand: clamp(1 - pred * target, min=0).mean() with +-1 targets.
import torch
import torch.nn as nn

batch_size = 32768
dim = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return torch.clamp(1 - predictions * targets, min=0).mean()


def get_inputs():
    predictions = torch.randn(batch_size, dim)
    targets = torch.randint(0, 2, (batch_size, dim)).float() * 2 - 1
    return [predictions, targets]


def get_init_inputs():
    return []
