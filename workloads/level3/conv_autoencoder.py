# Convolutional autoencoder: strided conv encoder to a bottleneck, ConvTranspose2d decoder, sigmoid output.
import torch
import torch.nn as nn

batch_size = 32
in_channels = 3
image_size = 224
base_channels = 64


class Model(nn.Module):
    def __init__(self, in_channels, base_channels):
        super().__init__()
        c = base_channels
        self.encoder = nn.Sequential(
            nn.Conv2d(in_channels, c, 4, stride=2, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(c, 2 * c, 4, stride=2, padding=1),
            nn.BatchNorm2d(2 * c),
            nn.ReLU(inplace=True),
            nn.Conv2d(2 * c, 4 * c, 4, stride=2, padding=1),
            nn.BatchNorm2d(4 * c),
            nn.ReLU(inplace=True),
        )
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(4 * c, 2 * c, 4, stride=2, padding=1),
            nn.BatchNorm2d(2 * c),
            nn.ReLU(inplace=True),
            nn.ConvTranspose2d(2 * c, c, 4, stride=2, padding=1),
            nn.BatchNorm2d(c),
            nn.ReLU(inplace=True),
            nn.ConvTranspose2d(c, in_channels, 4, stride=2, padding=1),
            nn.Sigmoid(),
        )

    def forward(self, x):
        return self.decoder(self.encoder(x))


def get_inputs():
    return [torch.rand(batch_size, in_channels, image_size, image_size)]


def get_init_inputs():
    return [in_channels, base_channels]
