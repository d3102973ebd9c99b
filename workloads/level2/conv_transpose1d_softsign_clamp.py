# Strided ConvTranspose1d (audio-style upsampling), Softsign, then clamp to [-0.5, 0.5].
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 512
out_channels = 256
length = 4096
kernel_size = 8
stride = 4


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super().__init__()
        self.deconv = nn.ConvTranspose1d(in_channels, out_channels, kernel_size, stride=stride, padding=(kernel_size - stride) // 2)

    def forward(self, x):
        x = F.softsign(self.deconv(x))
        return torch.clamp(x, min=-0.5, max=0.5)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride]
