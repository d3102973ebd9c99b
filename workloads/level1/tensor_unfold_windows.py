# Overlapping sliding windows with Tensor.unfold (size 256, step 128) along the last dimension.
import torch
import torch.nn as nn

batch_size = 256
channels = 16
length = 65536
window = 256
step = 128


class Model(nn.Module):
    def __init__(self, window, step):
        super().__init__()
        self.window = window
        self.step = step

    def forward(self, x):
        return x.unfold(-1, self.window, self.step)


def get_inputs():
    return [torch.rand(batch_size, channels, length)]


def get_init_inputs():
    return [window, step]
