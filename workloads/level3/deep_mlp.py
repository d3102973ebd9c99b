# Deep MLP: a stack of Linear + ReLU layers of varying widths ending in a classifier layer.
import torch
import torch.nn as nn

batch_size = 128
input_size = 4096
layer_sizes = [4096, 2048, 2048, 1024, 1024, 512, 512]
output_size = 1000


class Model(nn.Module):
    def __init__(self, input_size, layer_sizes, output_size):
        super().__init__()
        layers = []
        current = input_size
        for width in layer_sizes:
            layers.append(nn.Linear(current, width))
            layers.append(nn.ReLU())
            current = width
        layers.append(nn.Linear(current, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, layer_sizes, output_size]
